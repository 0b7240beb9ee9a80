import { existsSync } from "node:fs";
import { createClient } from "@tursodatabase/api";
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
import { client } from "../helpers/http.js";
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
        plan_id: "self-hosted",
        plan_timeline: "",
        platform: "",
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

describe("listing organizations", () => {
  it("wraps the v1 list in {organizations} for @tursodatabase/api, which reads that key", async () => {
    const u = await createUser(h);
    const team = await createTeam(u);
    const turso = createClient({ org: u.username, token: u.token, baseUrl: h.apiBase });
    const orgs = await turso.organizations.list();
    expect(orgs.map((o) => o.slug).sort()).toEqual([team, u.username].sort());
    expect(orgs.find((o) => o.slug === team)).toMatchObject({ name: team, type: "team", overages: false });
    // Anyone else gets the specification's bare array.
    expect(Array.isArray((await u.api.get("/v1/organizations")).body)).toBe(true);
    const raw = await u.api.get("/v1/organizations", { headers: { "user-agent": "@tursodatabase/api" } });
    expect(raw.body.organizations).toHaveLength(2);
  });

  it("lists organizations with ids for the turso CLI on /v2/organizations", async () => {
    const u = await createUser(h);
    const team = await createTeam(u);
    const r = await u.api.get("/v2/organizations", {
      headers: { "user-agent": "turso-cli/1.0.15 (linux/amd64)", TursoCliVersion: "v1.0.15" },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.pagination).toEqual({ next: null });
    expect(r.body.organizations.map((o: { slug: string }) => o.slug).sort()).toEqual(
      [team, u.username].sort(),
    );
    const personal = r.body.organizations.find((o: { type: string }) => o.type === "personal");
    expect(personal).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "personal",
      slug: u.username,
      type: "personal",
      stripe_id: "",
      overages: false,
      blocked_reads: false,
      blocked_writes: false,
      require_mfa: false,
      plan_id: "self-hosted",
      plan_timeline: "",
      platform: "",
    });
  });

  it("pages through /v2/organizations with limit and cursor", async () => {
    const u = await createUser(h);
    for (let i = 0; i < 3; i++) await createTeam(u);
    const all = (await u.api.get("/v2/organizations")).body.organizations.map(
      (o: { slug: string }) => o.slug,
    );
    expect(all).toHaveLength(4);
    expect(all).toEqual([...all].sort());
    const seen: string[] = [];
    let next: string | null = null;
    do {
      const r = await u.api.get(`/v2/organizations?limit=3${next ? `&cursor=${next}` : ""}`);
      expect(r.status, r.text).toBe(200);
      seen.push(...r.body.organizations.map((o: { slug: string }) => o.slug));
      next = r.body.pagination.next;
    } while (next);
    expect(seen).toEqual(all);
    expect((await u.api.get("/v2/organizations?cursor=nope")).status).toBe(400);
  });

  it("shows an organization-scoped token its own organization only", async () => {
    const u = await createUser(h);
    const team = await createTeam(u);
    const minted = await u.api.post(`/v1/auth/api-tokens/${uniqueName("t")}`, { organization: team });
    const scoped = client(h.url, minted.body.token);
    const v2 = await scoped.get("/v2/organizations");
    expect(v2.body.organizations.map((o: { slug: string }) => o.slug)).toEqual([team]);
    expect((await scoped.get("/v1/organizations")).body.map((o: { slug: string }) => o.slug)).toEqual([team]);
  });

  it("refuses to list without a token", async () => {
    expect((await client(h.url, null).get("/v2/organizations")).status).toBe(401);
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
