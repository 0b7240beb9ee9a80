import { createClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addMember,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
  uniqueName,
} from "../helpers/factories.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let owner: TestUser;
let team: string;
const m = (p = "", org = team) => `/v1/organizations/${org}/members${p}`;

async function auditCodes(
  who: TestUser,
  org: string,
): Promise<Array<{ code: string; author: string; data: unknown }>> {
  const r = await who.api.get(`/v1/organizations/${org}/audit-logs`);
  expect(r.status, r.text).toBe(200);
  return r.body.audit_logs;
}

async function mint(who: TestUser, body?: unknown): Promise<string> {
  const r = await who.api.post(`/v1/auth/api-tokens/${uniqueName("t")}`, body);
  expect(r.status, r.text).toBe(200);
  return r.body.token;
}

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  team = await createTeam(owner);
});
afterAll(() => h.close());

describe("adding members", () => {
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
    const entry = (await auditCodes(owner, team)).find((e) => e.code === "org-member-add");
    expect(entry).toMatchObject({ author: owner.username, data: { username: bob.username, role: "admin" } });
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

  it("lets only owners and admins add members", async () => {
    const org = await createTeam(owner);
    const member = await createUser(h);
    await addMember(owner, org, member.username, "member");
    const newcomer = await createUser(h);
    const r = await member.api.post(m("", org), { username: newcomer.username });
    expect(r).toMatchObject({
      status: 403,
      body: { error: "only organization admins or owners can manage members" },
    });
  });
});

describe("listing and retrieving members", () => {
  it("pages through members with limit and cursor, by username", async () => {
    const org = await createTeam(owner);
    for (let i = 0; i < 4; i++) await addMember(owner, org, (await createUser(h)).username, "member");
    const all = (await owner.api.get(m("", org))).body;
    expect(all.pagination).toEqual({ next: null });
    const names = all.members.map((x: { username: string }) => x.username);
    expect(names).toHaveLength(5);
    expect(names).toEqual([...names].sort());

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `?limit=2&cursor=${cursor}` : "?limit=2";
      const page = await owner.api.get(m(q, org));
      expect(page.status, page.text).toBe(200);
      expect(page.body.members.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.members.map((x: { username: string }) => x.username));
      cursor = page.body.pagination.next;
    } while (cursor);
    expect(seen).toEqual(names);
  });

  it("refuses a malformed cursor or limit", async () => {
    expect((await owner.api.get(m("?cursor=garbage"))).status).toBe(400);
    expect((await owner.api.get(m("?limit=0"))).status).toBe(400);
  });

  it("retrieves one member, and answers 404 for anyone who isn't one", async () => {
    const viewer = await createUser(h);
    await addMember(owner, team, viewer.username, "viewer");
    const r = await viewer.api.get(m(`/${owner.username}`));
    expect(r).toMatchObject({
      status: 200,
      body: { member: { username: owner.username, role: "owner", email: `${owner.username}@example.com` } },
    });
    const outsider = await createUser(h);
    expect(await owner.api.get(m(`/${outsider.username}`))).toMatchObject({
      status: 404,
      body: { error: "could not find member" },
    });
    expect((await owner.api.get(m("/ghost-user"))).status).toBe(404);
  });

  it("refuses non-members, who can't probe who belongs", async () => {
    const outsider = await createUser(h);
    expect((await outsider.api.get(m(`/${owner.username}`))).status).toBe(403);
    expect((await outsider.api.get(m("/ghost-user"))).status).toBe(403);
  });
});

describe("changing roles", () => {
  async function teamWith(roles: Record<string, string>) {
    const org = await createTeam(owner);
    const users: Record<string, TestUser> = {};
    for (const [name, role] of Object.entries(roles)) {
      users[name] = await createUser(h);
      await addMember(owner, org, users[name].username, role);
    }
    return { org, users };
  }

  it("lets an admin change a member's role, and records it", async () => {
    const { org, users } = await teamWith({ admin: "admin", bob: "member" });
    const bob = users.bob!;
    const r = await users.admin!.api.patch(m(`/${bob.username}`, org), { role: "viewer" });
    expect(r).toMatchObject({
      status: 200,
      body: { member: { username: bob.username, role: "viewer", email: `${bob.username}@example.com` } },
    });
    expect((await owner.api.get(m(`/${bob.username}`, org))).body.member.role).toBe("viewer");
    const entry = (await auditCodes(owner, org)).find((e) => e.code === "org-member-role-update");
    expect(entry).toMatchObject({
      author: users.admin!.username,
      data: { username: bob.username, role: "viewer", previous_role: "member" },
    });
  });

  it("reads the body without a content type, as @tursodatabase/api sends it", async () => {
    const { org, users } = await teamWith({ bob: "member" });
    const r = await owner.api.patch(m(`/${users.bob!.username}`, org), JSON.stringify({ role: "admin" }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.member.role).toBe("admin");
  });

  it("refuses unknown roles and unknown members", async () => {
    const { org, users } = await teamWith({ bob: "member" });
    for (const body of [{ role: "superuser" }, {}, { role: "" }]) {
      expect(await owner.api.patch(m(`/${users.bob!.username}`, org), body)).toMatchObject({
        status: 400,
        body: { error: "invalid role" },
      });
    }
    expect(await owner.api.patch(m("/ghost-user", org), { role: "admin" })).toMatchObject({
      status: 404,
      body: { error: "could not find user ghost-user" },
    });
  });

  it("refuses members and viewers with Turso's message", async () => {
    const { org, users } = await teamWith({ bob: "member", vic: "viewer" });
    for (const who of [users.bob!, users.vic!]) {
      expect(await who.api.patch(m(`/${users.bob!.username}`, org), { role: "admin" })).toMatchObject({
        status: 403,
        body: { error: "updating member roles is only allowed for admin or owner" },
      });
    }
    expect((await owner.api.get(m(`/${users.bob!.username}`, org))).body.member.role).toBe("member");
  });

  it("lets only an owner make or unmake an owner", async () => {
    const { org, users } = await teamWith({ admin: "admin", bob: "member" });
    const admin = users.admin!;
    expect((await admin.api.patch(m(`/${users.bob!.username}`, org), { role: "owner" })).status).toBe(403);
    expect((await admin.api.patch(m(`/${owner.username}`, org), { role: "member" })).status).toBe(403);
    expect((await admin.api.patch(m(`/${admin.username}`, org), { role: "owner" })).status).toBe(403);
    const promoted = await owner.api.patch(m(`/${users.bob!.username}`, org), { role: "owner" });
    expect(promoted.body.member.role).toBe("owner");
    // With two owners, one may step down.
    expect((await owner.api.patch(m(`/${owner.username}`, org), { role: "admin" })).body.member.role).toBe(
      "admin",
    );
  });

  it("keeps the last owner", async () => {
    const { org } = await teamWith({});
    const r = await owner.api.patch(m(`/${owner.username}`, org), { role: "admin" });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/only owner/);
    expect((await owner.api.get(m(`/${owner.username}`, org))).body.member.role).toBe("owner");
  });

  it("changes nothing, and records nothing, when the role is the same", async () => {
    const { org, users } = await teamWith({ bob: "member" });
    const before = (await auditCodes(owner, org)).length;
    const r = await owner.api.patch(m(`/${users.bob!.username}`, org), { role: "member" });
    expect(r.body.member.role).toBe("member");
    expect((await auditCodes(owner, org)).length).toBe(before);
  });

  it("never leaves a team without an owner when two owners demote each other at once", async () => {
    const { org, users } = await teamWith({ co: "member" });
    const co = users.co!;
    await owner.api.patch(m(`/${co.username}`, org), { role: "owner" });
    const [a, b] = await Promise.all([
      owner.api.patch(m(`/${co.username}`, org), { role: "member" }),
      co.api.patch(m(`/${owner.username}`, org), { role: "member" }),
    ]);
    // The one that comes second is refused: the last owner stays (400), or its caller is no owner any more (403).
    expect([a.status, b.status].filter((s) => s === 200)).toHaveLength(1);
    expect([a.status, b.status].filter((s) => s !== 200)[0]).toBeOneOf([400, 403]);
    const owners = (await owner.api.get(m("", org))).body.members.filter(
      (x: { role: string }) => x.role === "owner",
    );
    expect(owners).toHaveLength(1);
  });
});

describe("removing members", () => {
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
    const codes = (await auditCodes(owner, team)).map((e) => e.code);
    expect(codes).toContain("org-member-leave");
  });

  it("does not let an admin remove an owner", async () => {
    const admin = await createUser(h);
    await addMember(owner, team, admin.username, "admin");
    expect((await admin.api.delete(m(`/${owner.username}`))).status).toBe(403);
  });

  it("revokes the removed member's tokens restricted to the organization, and only those", async () => {
    const org = await createTeam(owner);
    await createGroup(owner, org, "default");
    const bob = await createUser(h);
    await addMember(owner, org, bob.username, "admin");
    const orgToken = await mint(bob, { organization: org });
    const groupToken = await mint(bob, { organization: org, group: "default", scopes: ["read-only"] });
    const personalToken = await mint(bob, { organization: bob.username });
    expect((await client(h.url, orgToken).get(m("", org))).status).toBe(200);

    const r = await owner.api.delete(m(`/${bob.username}`, org));
    expect(r).toMatchObject({ status: 200, body: { member: bob.username } });
    expect((await client(h.url, orgToken).get("/v1/auth/validate")).status).toBe(401);
    expect((await client(h.url, groupToken).get("/v1/auth/validate")).status).toBe(401);
    expect((await client(h.url, personalToken).get("/v1/auth/validate")).status).toBe(200);
    expect((await bob.api.get("/v1/auth/validate")).status).toBe(200);
    const entry = (await auditCodes(owner, org)).find((e) => e.code === "org-member-rm");
    expect(entry).toMatchObject({ data: { username: bob.username, revoked_tokens: 2 } });
  });

  it("doesn't let a group-scoped token take its user out of the organization", async () => {
    const org = await createTeam(owner);
    await createGroup(owner, org, "default");
    const bob = await createUser(h);
    await addMember(owner, org, bob.username, "admin");
    const groupToken = await mint(bob, { organization: org, group: "default", scopes: ["full-access"] });
    expect((await client(h.url, groupToken).delete(m(`/${bob.username}`, org))).status).toBe(403);
    expect((await owner.api.get(m(`/${bob.username}`, org))).status).toBe(200);
  });

  it("never leaves a team without an owner when both owners leave at once", async () => {
    const org = await createTeam(owner);
    const co = await createUser(h);
    await addMember(owner, org, co.username, "admin");
    await owner.api.patch(m(`/${co.username}`, org), { role: "owner" });
    const [a, b] = await Promise.all([
      owner.api.delete(m(`/${owner.username}`, org)),
      co.api.delete(m(`/${co.username}`, org)),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    const remaining = a.status === 200 ? co : owner;
    const list = await remaining.api.get(m("", org));
    expect(list.body.members).toEqual([
      expect.objectContaining({ username: remaining.username, role: "owner" }),
    ]);
  });
});
