import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addMember,
  createDatabase,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
  uniqueName,
} from "../helpers/factories.js";
import { instanceFile } from "../helpers/files.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let owner: TestUser;

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
});
afterAll(() => h.close());

describe("organizations", () => {
  it("gives every user a personal organization named `personal` with their username as slug", async () => {
    const r = await owner.api.get("/v1/organizations");
    expect(r.status).toBe(200);
    expect(Array.isArray(r.body)).toBe(true);
    expect(r.body).toEqual([
      {
        name: "personal",
        slug: owner.username,
        type: "personal",
        overages: false,
        blocked_reads: false,
        blocked_writes: false,
        require_mfa: false,
      },
    ]);
  });

  it("creates a team organization owned by the caller, with a slug from its name", async () => {
    const name = `Acme ${uniqueName("Corp")}`;
    const r = await owner.api.post("/v1/organizations", { name });
    expect(r.status, r.text).toBe(200);
    const slug = name.toLowerCase().replace(/ /g, "-");
    expect(r.body.organization).toMatchObject({ name, slug, type: "team" });
    expect(r.body.org).toEqual(r.body.organization);
    const members = await owner.api.get(`/v1/organizations/${slug}/members`);
    expect(members.body.members).toEqual([
      { username: owner.username, role: "owner", email: `${owner.username}@example.com` },
    ]);
    const again = await owner.api.post("/v1/organizations", { name });
    expect(again.status).toBe(409);
  });

  it("checks a name without creating anything on a dry run", async () => {
    const r = await owner.api.post("/v1/organizations?dry_run=true", { name: "Dry Run Co" });
    expect(r.status).toBe(200);
    expect(r.body.organization.slug).toBe("dry-run-co");
    expect((await owner.api.get("/v1/organizations/dry-run-co")).status).toBe(404);
  });

  it("refuses a team name that can't make a slug, and a slug a user already holds", async () => {
    expect((await owner.api.post("/v1/organizations", { name: "!!!" })).status).toBe(400);
    expect((await owner.api.post("/v1/organizations", { name: owner.username })).status).toBe(409);
  });

  it("retrieves one organization", async () => {
    const r = await owner.api.get(`/v1/organizations/${owner.username}`);
    expect(r.body.organization.slug).toBe(owner.username);
  });
});

describe("core operation 3: updating an organization", () => {
  it("lets owners, admins and members change overages, and refuses viewers", async () => {
    const team = await createTeam(owner);
    const roles = { admin: await createUser(h), member: await createUser(h), viewer: await createUser(h) };
    for (const [role, user] of Object.entries(roles)) await addMember(owner, team, user.username, role);

    let expected = false;
    for (const who of [owner, roles.admin, roles.member]) {
      expected = !expected;
      const r = await who.api.patch(`/v1/organizations/${team}`, { overages: expected });
      expect(r.status, r.text).toBe(200);
      expect(r.body.organization).toMatchObject({ slug: team, type: "team", overages: expected });
    }
    const denied = await roles.viewer.api.patch(`/v1/organizations/${team}`, { overages: !expected });
    expect(denied.status).toBe(403);
    expect((await owner.api.get(`/v1/organizations/${team}`)).body.organization.overages).toBe(expected);
  });

  it("persists the change", async () => {
    await owner.api.patch(`/v1/organizations/${owner.username}`, { overages: true });
    const list = await owner.api.get("/v1/organizations");
    expect(list.body.find((o: { slug: string }) => o.slug === owner.username).overages).toBe(true);
  });
});

describe("deleting an organization", () => {
  it("lets only the owner delete a team organization, and removes its databases' files", async () => {
    const team = await createTeam(owner);
    const admin = await createUser(h);
    await addMember(owner, team, admin.username, "admin");
    await createGroup(owner, team, "default");
    const d = await createDatabase(owner, team, "gone-with-org");
    expect((await admin.api.delete(`/v1/organizations/${team}`)).status).toBe(403);
    const r = await owner.api.delete(`/v1/organizations/${team}`);
    expect(r.status, r.text).toBe(200);
    expect(existsSync(instanceFile(h.dataDir, "aws-us-east-1", d.DbId))).toBe(false);
    expect((await owner.api.get(`/v1/organizations/${team}`)).status).toBe(404);
  });

  it("refuses to delete a personal organization", async () => {
    const r = await owner.api.delete(`/v1/organizations/${owner.username}`);
    expect(r.status).toBe(400);
  });
});
