import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTeam, createUser, type TestUser, uniqueName } from "../helpers/factories.js";
import { call, client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let alice: TestUser;

async function mint(who: TestUser, body?: unknown): Promise<{ name: string; token: string }> {
  const name = uniqueName("t");
  const r = await who.api.post(`/v1/auth/api-tokens/${name}`, body);
  expect(r.status, r.text).toBe(200);
  return { name, token: r.body.token };
}

beforeAll(async () => {
  h = await startTestShoal();
  alice = await createUser(h);
});
afterAll(() => h.close());

describe("the current user", () => {
  it("answers GET /v1/user in Turso's shape", async () => {
    const r = await alice.api.get("/v1/user");
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      user: {
        username: alice.username,
        name: alice.username,
        email: `${alice.username}@example.com`,
        avatarUrl: "",
        plan: "self-hosted",
        mfa: false,
        has_pending_invites: false,
        admin: false,
      },
    });
  });

  it("answers GET /v1/current-user with the username and plan the turso CLI reads", async () => {
    const r = await alice.api.get("/v1/current-user", {
      headers: { "user-agent": "turso-cli/1.0.15 (linux/amd64)", TursoCliVersion: "v1.0.15" },
    });
    expect(r.status).toBe(200);
    expect(r.body.user).toMatchObject({ username: alice.username, plan: "self-hosted" });
  });

  it("tells administrators apart", async () => {
    const r = await client(h.url, h.adminToken).get("/v1/user");
    expect(r.body.user).toMatchObject({ username: "admin", admin: true });
  });

  it("answers for restricted tokens too: they still act as their user", async () => {
    const team = await createTeam(alice);
    const scoped = await mint(alice, { organization: team });
    const r = await client(h.url, scoped.token).get("/v1/user");
    expect(r.body.user.username).toBe(alice.username);
  });

  it("refuses a request without a token", async () => {
    expect((await call(h.url, "GET", "/v1/user")).status).toBe(401);
    expect((await call(h.url, "GET", "/v1/current-user")).status).toBe(401);
  });
});

describe("POST /v1/auth/invalidate (auth logout --all)", () => {
  it("revokes the calling token and answers when, leaving the user's other tokens valid", async () => {
    const bob = await createUser(h);
    const session = await mint(bob);
    const ci = await mint(bob);
    const before = Math.floor(Date.now() / 1000);
    const r = await client(h.url, session.token).post("/v1/auth/invalidate", undefined, {
      headers: { "content-type": "application/json" },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ validFrom: expect.any(Number) });
    expect(Number.isInteger(r.body.validFrom)).toBe(true);
    expect(r.body.validFrom).toBeGreaterThanOrEqual(before);
    expect(r.body.validFrom).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));

    expect((await client(h.url, session.token).get("/v1/auth/validate")).status).toBe(401);
    expect((await client(h.url, ci.token).get("/v1/auth/validate")).status).toBe(200);
    expect((await bob.api.get("/v1/auth/validate")).status).toBe(200);
    const names = (await bob.api.get("/v1/auth/api-tokens")).body.tokens.map((t: { name: string }) => t.name);
    expect(names).not.toContain(session.name);
    expect(names).toContain(ci.name);
  });

  it("records the revocation in the user's audit log", async () => {
    const carol = await createUser(h);
    const session = await mint(carol);
    await client(h.url, session.token).post("/v1/auth/invalidate");
    const log = await carol.api.get(`/v1/organizations/${carol.username}/audit-logs`);
    expect(log.body.audit_logs[0]).toMatchObject({
      code: "user-token-delete",
      author: carol.username,
      data: { name: session.name, via: "auth/invalidate" },
    });
  });

  it("refuses to revoke the administrators' last token, which would lock everyone out", async () => {
    const admin = client(h.url, h.adminToken);
    const r = await admin.post("/v1/auth/invalidate");
    expect(r.status).toBe(409);
    expect(r.body.error).toContain("last API token");
    expect((await admin.get("/v1/auth/validate")).status).toBe(200);
  });

  it("lets an administrator with another token invalidate this one", async () => {
    const admin = client(h.url, h.adminToken);
    const spare = await admin.post(`/v1/auth/api-tokens/${uniqueName("spare")}`);
    const r = await client(h.url, spare.body.token).post("/v1/auth/invalidate");
    expect(r.status, r.text).toBe(200);
    expect((await client(h.url, spare.body.token).get("/v1/auth/validate")).status).toBe(401);
    expect((await admin.get("/v1/auth/validate")).status).toBe(200);
  });

  it("refuses a revoked token", async () => {
    const dave = await createUser(h);
    const session = await mint(dave);
    await client(h.url, session.token).post("/v1/auth/invalidate");
    expect((await client(h.url, session.token).post("/v1/auth/invalidate")).status).toBe(401);
  });
});

describe("the turso CLI's update check", () => {
  const latest = (headers: Record<string, string>) => call(h.url, "GET", "/releases/latest", { headers });

  it("answers the caller's own version, so the CLI neither updates itself nor nags", async () => {
    const r = await latest({ TursoCliVersion: "v1.0.15", "user-agent": "turso-cli/1.0.15 (linux/amd64)" });
    expect(r).toMatchObject({ status: 200, body: { latest: "v1.0.15" } });
    expect((await latest({ "user-agent": "turso-cli/0.98.2 (darwin/arm64)" })).body).toEqual({
      latest: "v0.98.2",
    });
  });

  it("answers v0.0.0, never newer than anyone, when the caller names no version", async () => {
    expect((await latest({})).body).toEqual({ latest: "v0.0.0" });
    expect((await latest({ TursoCliVersion: "dev" })).body).toEqual({ latest: "v0.0.0" });
    expect((await latest({ TursoCliVersion: `v1.2.3${"x".repeat(100)}` })).body).toEqual({
      latest: "v0.0.0",
    });
  });

  it("needs no token, but refuses a bad one", async () => {
    expect((await call(h.url, "GET", "/releases/latest", { token: "not-a-token" })).status).toBe(401);
  });
});
