import { createClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createTeam, createUser, type TestUser, uniqueName } from "../helpers/factories.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";
import { storeRows } from "../helpers/store-rows.js";

let h: TestShoal;
let owner: TestUser;
let team: string;
const v1 = (p = "", org = team) => `/v1/organizations/${org}${p}`;
const v2 = (p = "", org = team) => `/v2/organizations/${org}/invites${p}`;

/** A user whose e-mail is chosen by the test. */
async function userWithEmail(email: string): Promise<TestUser> {
  const username = uniqueName("user");
  const r = await client(h.url, h.adminToken).post("/v1/admin/users", { username, email });
  expect(r.status, r.text).toBe(200);
  return { username, token: r.body.token, api: client(h.url, r.body.token) };
}

async function auditCodes(
  org: string,
): Promise<Array<{ code: string; author: string; data: Record<string, unknown> }>> {
  const r = await owner.api.get(`/v1/organizations/${org}/audit-logs`);
  expect(r.status, r.text).toBe(200);
  return r.body.audit_logs;
}

const memberRole = async (org: string, username: string) =>
  (await owner.api.get(`/v1/organizations/${org}/members/${username}`)).body.member?.role;

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  team = await createTeam(owner);
});
afterAll(() => h.close());

describe("v1 invites (the turso CLI)", () => {
  it("invites an e-mail and answers Turso's PascalCase invite with its token", async () => {
    const r = await owner.api.post(v1("/invites"), { email: "Pat@Example.com", role: "admin" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.invited).toEqual({
      ID: expect.any(Number),
      CreatedAt: expect.any(String),
      UpdatedAt: expect.any(String),
      DeletedAt: null,
      Role: "admin",
      Email: "pat@example.com",
      Username: "",
      OrganizationID: expect.any(String),
      Token: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/),
      Organization: expect.objectContaining({ slug: team, type: "team" }),
      Accepted: false,
    });
    const list = await owner.api.get(v1("/invites"));
    const listed = list.body.invites.find((i: { Email: string }) => i.Email === "pat@example.com");
    expect(listed).toMatchObject({ ID: r.body.invited.ID, Role: "admin", Accepted: false, Token: "" });
    expect((await auditCodes(team)).find((e) => e.code === "org-invite-create")).toMatchObject({
      author: owner.username,
      data: { email: "pat@example.com", role: "admin" },
    });
  });

  it("takes the CLI's singular /invite with its JSON body, and deletes with a JSON {}", async () => {
    const email = `${uniqueName("cli")}@example.com`;
    const r = await owner.api.post(v1("/invite"), `${JSON.stringify({ email, role: "member" })}\n`, {
      contentType: "application/json",
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.invited.Email).toBe(email);
    const d = await owner.api.delete(v1(`/invites/${email}`));
    expect(d).toMatchObject({ status: 200, body: {} });
    expect(d.headers.get("content-type")).toContain("application/json");
    expect(await owner.api.delete(v1(`/invites/${email}`))).toMatchObject({
      status: 404,
      body: { error: "invite not found", code: "invite_not_found" },
    });
  });

  it("refuses a missing or malformed e-mail and an owner role", async () => {
    expect(await owner.api.post(v1("/invites"), {})).toMatchObject({
      status: 400,
      body: { error: "email is required" },
    });
    expect((await owner.api.post(v1("/invites"), { email: "not-an-email" })).status).toBe(400);
    expect(await owner.api.post(v1("/invites"), { email: "x@example.com", role: "owner" })).toMatchObject({
      status: 400,
      body: { error: "invalid role" },
    });
  });
});

describe("v2 invites (@tursodatabase/api)", () => {
  it("invites, lists and deletes through the official client", async () => {
    const turso = createClient({ org: team, token: owner.token, baseUrl: h.apiBase });
    const email = `${uniqueName("ts")}@example.com`;
    const invited = await turso.organizations.inviteUser(email, "admin");
    expect(invited).toEqual({
      id: expect.any(Number),
      email,
      role: "admin",
      organization: team,
      token: expect.any(String),
      created_at: expect.any(String),
    });
    const listed = (await turso.organizations.listInvites()).find((i) => i.email === email);
    // The list never carries the token: it is shown once, at creation.
    expect(listed).toEqual({ id: expect.any(Number), email, role: "admin", created_at: expect.any(String) });
    await turso.organizations.deleteInvite(email);
    expect((await turso.organizations.listInvites()).map((i) => i.email)).not.toContain(email);
  });

  it("invites an existing user by username", async () => {
    const bob = await createUser(h);
    const r = await owner.api.post(v2(), { username: bob.username });
    expect(r.status, r.text).toBe(200);
    expect(r.body.invited).toMatchObject({
      email: "",
      username: bob.username,
      role: "member",
      organization: team,
    });
    const listed = (await owner.api.get(v2())).body.invites.find(
      (i: { id: number }) => i.id === r.body.invited.id,
    );
    expect(listed).toEqual({
      id: r.body.invited.id,
      email: "",
      username: bob.username,
      role: "member",
      created_at: expect.any(String),
    });
    expect((await owner.api.delete(v2(`/${bob.username}`))).status).toBe(200);
  });

  it("wants exactly one of email and username", async () => {
    for (const body of [{}, { email: "a@example.com", username: "bob" }, { email: "" }]) {
      expect(await owner.api.post(v2(), body)).toMatchObject({
        status: 400,
        body: { error: "exactly one of email or username is required" },
      });
    }
  });

  it("refuses unknown users and people who are already members", async () => {
    expect(await owner.api.post(v2(), { username: "ghost-user" })).toMatchObject({
      status: 404,
      body: { error: "could not find user ghost-user" },
    });
    const carl = await createUser(h);
    await addMember(owner, team, carl.username, "member");
    expect((await owner.api.post(v2(), { username: carl.username })).status).toBe(409);
    expect((await owner.api.post(v2(), { email: `${carl.username.toUpperCase()}@example.com` })).status).toBe(
      409,
    );
  });

  it("replaces a pending invite to the same address", async () => {
    const email = `${uniqueName("again")}@example.com`;
    const first = await owner.api.post(v2(), { email, role: "member" });
    const second = await owner.api.post(v2(), { email: email.toUpperCase(), role: "admin" });
    expect(second.body.invited.id).not.toBe(first.body.invited.id);
    const mine = (await owner.api.get(v2())).body.invites.filter((i: { email: string }) => i.email === email);
    expect(mine).toEqual([expect.objectContaining({ id: second.body.invited.id, role: "admin" })]);
  });

  it("stores only a hash of the token", async () => {
    const r = await owner.api.post(v2(), { email: `${uniqueName("hash")}@example.com` });
    const rows = await storeRows(h, `select token from invites where id = ${Number(r.body.invited.id)}`);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token).not.toBe(r.body.invited.token);
    expect(JSON.stringify(await owner.api.get(v2()))).not.toContain(r.body.invited.token);
  });
});

describe("who may manage invites", () => {
  it("lets owners and admins only", async () => {
    const org = await createTeam(owner);
    const admin = await createUser(h);
    const member = await createUser(h);
    await addMember(owner, org, admin.username, "admin");
    await addMember(owner, org, member.username, "member");
    expect((await admin.api.post(v2("", org), { email: "adm@example.com" })).status).toBe(200);
    for (const call of [
      () => member.api.get(v2("", org)),
      () => member.api.post(v2("", org), { email: "m@example.com" }),
      () => member.api.delete(v2("/adm@example.com", org)),
      () => member.api.get(v1("/invites", org)),
    ]) {
      const r = await call();
      expect(r.status).toBe(403);
    }
    expect((await owner.api.get(v2("", org))).body.invites).toHaveLength(1);
  });

  it("refuses invites to a personal organization", async () => {
    const r = await owner.api.post(v2("", owner.username), { email: "p@example.com" });
    expect(r).toMatchObject({ status: 400, body: { error: "invites are only for team organizations" } });
    expect((await owner.api.get("/v2/invites")).status).toBe(400);
  });
});

describe("accepting and declining invites", () => {
  it("lets the invited user see and accept an invite to their username", async () => {
    const org = await createTeam(owner);
    const bob = await createUser(h);
    // Invited twice, by e-mail and then by username: accepting one settles both.
    await owner.api.post(v2("", org), { email: `${bob.username}@example.com` });
    const made = await owner.api.post(v2("", org), { username: bob.username, role: "admin" });
    expect((await bob.api.get("/v1/user")).body.user.has_pending_invites).toBe(true);
    const mine = await bob.api.get("/v1/user/invites");
    expect(mine.body.invites).toHaveLength(2);
    expect(mine.body.invites[1]).toEqual({
      id: made.body.invited.id,
      organization: org,
      organization_name: org,
      role: "admin",
      email: "",
      username: bob.username,
      inviter: owner.username,
      created_at: expect.any(String),
    });
    const r = await bob.api.post(`/v1/user/invites/${made.body.invited.id}/accept`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      organization: { slug: org, type: "team" },
      member: { username: bob.username, role: "admin" },
    });
    expect(await memberRole(org, bob.username)).toBe("admin");
    expect((await bob.api.get("/v1/user/invites")).body.invites).toEqual([]);
    expect((await bob.api.get("/v1/user")).body.user.has_pending_invites).toBe(false);
    expect((await owner.api.get(v2("", org))).body.invites).toEqual([]);
    expect((await auditCodes(org)).find((e) => e.code === "org-member-add")).toMatchObject({
      author: bob.username,
      data: { username: bob.username, role: "admin", invite: made.body.invited.id, inviter: owner.username },
    });
    // Accepted once only.
    expect((await bob.api.post(`/v1/user/invites/${made.body.invited.id}/accept`)).status).toBe(404);
  });

  it("matches an invite's e-mail without case", async () => {
    const org = await createTeam(owner);
    const carol = await userWithEmail(`${uniqueName("Carol")}@Example.COM`);
    const email = (await client(h.url, carol.token).get("/v1/user")).body.user.email as string;
    const made = await owner.api.post(v1("/invites", org), { email: email.toLowerCase() });
    const mine = (await carol.api.get("/v1/user/invites")).body.invites;
    expect(mine.map((i: { id: number }) => i.id)).toEqual([made.body.invited.ID]);
    expect((await carol.api.post(`/v1/user/invites/${made.body.invited.ID}/accept`)).status).toBe(200);
    expect(await memberRole(org, carol.username)).toBe("member");
  });

  it("lets someone else accept an e-mail invite only with its token", async () => {
    const org = await createTeam(owner);
    const made = await owner.api.post(v2("", org), { email: "outsider@elsewhere.test" });
    const { id, token } = made.body.invited;
    const dave = await createUser(h);
    expect((await dave.api.get("/v1/user/invites")).body.invites).toEqual([]);
    expect(await dave.api.post(`/v1/user/invites/${id}/accept`)).toMatchObject({
      status: 404,
      body: { error: "invite not found" },
    });
    expect((await dave.api.post(`/v1/user/invites/${id}/accept`, { token: `${token}x` })).status).toBe(404);
    const r = await dave.api.post(`/v1/user/invites/${id}/accept`, { token });
    expect(r.status, r.text).toBe(200);
    expect(await memberRole(org, dave.username)).toBe("member");
  });

  it("doesn't let anyone else accept an invite to a username, token or not", async () => {
    const org = await createTeam(owner);
    const bob = await createUser(h);
    const eve = await createUser(h);
    const made = await owner.api.post(v2("", org), { username: bob.username });
    const { id, token } = made.body.invited;
    expect((await eve.api.post(`/v1/user/invites/${id}/accept`, { token })).status).toBe(404);
    expect((await eve.api.post(`/v1/user/invites/${id}/decline`)).status).toBe(404);
    expect(await memberRole(org, eve.username)).toBeUndefined();
    expect((await owner.api.get(v2("", org))).body.invites).toHaveLength(1);
  });

  it("needs an unrestricted token to accept", async () => {
    const org = await createTeam(owner);
    const bob = await createUser(h);
    const made = await owner.api.post(v2("", org), { username: bob.username });
    const minted = await bob.api.post(`/v1/auth/api-tokens/${uniqueName("t")}`, {
      organization: bob.username,
    });
    const scoped = client(h.url, minted.body.token);
    expect((await scoped.get("/v1/user/invites")).body.invites).toHaveLength(1);
    expect((await scoped.post(`/v1/user/invites/${made.body.invited.id}/accept`)).status).toBe(403);
    expect(await memberRole(org, bob.username)).toBeUndefined();
  });

  it("refuses an invite for someone who became a member meanwhile", async () => {
    const org = await createTeam(owner);
    const bob = await createUser(h);
    const made = await owner.api.post(v2("", org), { username: bob.username, role: "admin" });
    await addMember(owner, org, bob.username, "viewer");
    expect((await bob.api.post(`/v1/user/invites/${made.body.invited.id}/accept`)).status).toBe(409);
    expect(await memberRole(org, bob.username)).toBe("viewer");
  });

  it("declines an invite: it is gone and recorded", async () => {
    const org = await createTeam(owner);
    const bob = await createUser(h);
    const made = await owner.api.post(v2("", org), { username: bob.username });
    const r = await bob.api.post(`/v1/user/invites/${made.body.invited.id}/decline`);
    expect(r).toMatchObject({ status: 200, body: {} });
    expect((await owner.api.get(v2("", org))).body.invites).toEqual([]);
    expect((await bob.api.post(`/v1/user/invites/${made.body.invited.id}/accept`)).status).toBe(404);
    expect((await auditCodes(org)).find((e) => e.code === "org-invite-decline")).toMatchObject({
      author: bob.username,
    });
  });

  it("refuses an invite that was deleted, and malformed ids", async () => {
    const org = await createTeam(owner);
    const bob = await createUser(h);
    const made = await owner.api.post(v2("", org), { username: bob.username });
    await owner.api.delete(v2(`/${bob.username}`, org));
    expect((await bob.api.post(`/v1/user/invites/${made.body.invited.id}/accept`)).status).toBe(404);
    expect((await bob.api.post("/v1/user/invites/abc/accept")).status).toBe(400);
    expect((await bob.api.post("/v1/user/invites/-1/decline")).status).toBe(400);
    // Past the store's 32-bit ids: a clear 400 on both stores, never a 500.
    expect((await bob.api.post("/v1/user/invites/3000000000/accept")).status).toBe(400);
    expect((await bob.api.post("/v1/user/invites/3000000000/decline")).status).toBe(400);
  });

  it("lets an invite be accepted once when two accepts race", async () => {
    const org = await createTeam(owner);
    const made = await owner.api.post(v2("", org), { email: "race@elsewhere.test" });
    const { id, token } = made.body.invited;
    const [a, b] = [await createUser(h), await createUser(h)];
    const results = await Promise.all([
      a.api.post(`/v1/user/invites/${id}/accept`, { token }),
      b.api.post(`/v1/user/invites/${id}/accept`, { token }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 404]);
    const members = (await owner.api.get(`/v1/organizations/${org}/members`)).body.members;
    expect(members).toHaveLength(2);
  });

  it("drops invites to a username when that user is deleted", async () => {
    const org = await createTeam(owner);
    const gone = await createUser(h);
    await owner.api.post(v2("", org), { username: gone.username });
    expect((await client(h.url, h.adminToken).delete(`/v1/admin/users/${gone.username}`)).status).toBe(200);
    expect((await owner.api.get(v2("", org))).body.invites).toEqual([]);
  });
});
