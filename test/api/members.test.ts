import { createClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createTeam, createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let owner: TestUser;
let team: string;
const m = (p = "") => `/v1/organizations/${team}/members${p}`;

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  team = await createTeam(owner);
});
afterAll(() => h.close());

describe("members", () => {
  it("adds a member with the spec's body and answers {member, role}", async () => {
    const bob = await createUser(h);
    const r = await owner.api.post(m(), { username: bob.username, role: "admin" });
    expect(r.body).toEqual({ member: bob.username, role: "admin" });
    const list = await owner.api.get(m());
    expect(list.body.members).toContainEqual({
      username: bob.username,
      role: "admin",
      email: `${bob.username}@example.com`,
    });
    // The new member now sees the team.
    expect((await bob.api.get("/v1/organizations")).body.map((o: { slug: string }) => o.slug)).toContain(
      team,
    );
  });

  it("adds and removes a member through @tursodatabase/api (username in the path)", async () => {
    const carol = await createUser(h);
    const turso = createClient({ org: team, token: owner.token, baseUrl: h.apiBase });
    expect(await turso.organizations.addMember(carol.username)).toEqual({
      member: carol.username,
      role: "member",
    });
    expect((await turso.organizations.members()).map((x) => x.username)).toContain(carol.username);
    expect(await turso.organizations.removeMember(carol.username)).toEqual({ member: carol.username });
    expect((await carol.api.get(m())).status).toBe(403);
  });

  it("defaults the role to member and refuses owner or unknown roles", async () => {
    const dave = await createUser(h);
    expect((await owner.api.post(m(), { username: dave.username })).body.role).toBe("member");
    const eve = await createUser(h);
    for (const role of ["owner", "superuser"]) {
      const r = await owner.api.post(m(), { username: eve.username, role });
      expect(r).toMatchObject({ status: 400, body: { error: "invalid role" } });
    }
  });

  it("answers Turso's errors for unknown users and existing members", async () => {
    expect(await owner.api.post(m(), { username: "ghost-user" })).toMatchObject({
      status: 404,
      body: { error: "could not find user ghost-user" },
    });
    const frank = await createUser(h);
    await addMember(owner, team, frank.username, "member");
    expect(await owner.api.post(m(), { username: frank.username })).toMatchObject({
      status: 409,
      body: { error: `user ${frank.username} is already a member of organization ${team}` },
    });
    expect(await owner.api.delete(m("/ghost-user"))).toMatchObject({
      status: 404,
      body: { error: `user ghost-user is not a member of org ${team}` },
    });
  });

  it("refuses members in a personal organization", async () => {
    const other = await createUser(h);
    const r = await owner.api.post(`/v1/organizations/${owner.username}/members`, {
      username: other.username,
    });
    expect(r.status).toBe(400);
  });

  it("lets a member leave but not remove others; keeps the last owner", async () => {
    const a = await createUser(h);
    const b = await createUser(h);
    await addMember(owner, team, a.username, "member");
    await addMember(owner, team, b.username, "member");
    expect((await a.api.delete(m(`/${b.username}`))).status).toBe(403);
    expect((await a.api.delete(m(`/${a.username}`))).status).toBe(200);
    const last = await owner.api.delete(m(`/${owner.username}`));
    expect(last.status).toBe(400);
    expect(last.body.error).toMatch(/only owner/);
  });

  it("does not let an admin remove an owner", async () => {
    const admin = await createUser(h);
    await addMember(owner, team, admin.username, "admin");
    expect((await admin.api.delete(m(`/${owner.username}`))).status).toBe(403);
  });
});
