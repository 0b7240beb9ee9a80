import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, type TestUser } from "../helpers/factories.js";
import { call } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";
import { storeRows } from "../helpers/store-rows.js";

let h: TestShoal;
let u: TestUser;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
});
afterAll(() => h.close());

describe("API tokens", () => {
  it("shows a new token once, as an EdDSA JWT whose jti is its id", async () => {
    const r = await u.api.post("/v1/auth/api-tokens/laptop");
    expect(r.body).toEqual({ name: "laptop", id: expect.any(String), token: expect.any(String) });
    const [header, payload] = (r.body.token as string)
      .split(".")
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, "base64url").toString()));
    expect(header.alg).toBe("EdDSA");
    expect(payload.jti).toBe(r.body.id);
    const list = await u.api.get("/v1/auth/api-tokens");
    expect(list.body.tokens).toContainEqual({
      name: "laptop",
      id: r.body.id,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    });
    expect(JSON.stringify(list.body)).not.toContain(r.body.token);
  });

  it("stores only a hash of each token", async () => {
    const r = await u.api.post("/v1/auth/api-tokens/hashed");
    const rows = await storeRows(h, "SELECT * FROM api_tokens");
    expect(rows.length).toBeGreaterThan(1);
    expect(JSON.stringify(rows)).not.toContain(r.body.token);
    expect(JSON.stringify(rows)).not.toContain(h.adminToken);
  });

  it("validates the caller's token with exp -1 (never expires)", async () => {
    expect((await u.api.get("/v1/auth/validate")).body).toEqual({ exp: -1 });
    expect((await u.api.get("/v1/auth/api-tokens/validate")).body).toEqual({ exp: -1 });
  });

  it("lets a user revoke the very token it is calling with", async () => {
    const t = (await u.api.post("/v1/auth/api-tokens/self-destruct")).body.token;
    const r = await call(h.url, "DELETE", "/v1/auth/api-tokens/self-destruct", { token: t });
    expect(r.status).toBe(200);
    expect((await call(h.url, "GET", "/v1/auth/validate", { token: t })).status).toBe(401);
  });

  it("scopes names per user and refuses bad names", async () => {
    const other = await createUser(h);
    expect((await other.api.post("/v1/auth/api-tokens/laptop")).status).toBe(200);
    expect((await u.api.post(`/v1/auth/api-tokens/${"x".repeat(65)}`)).status).toBe(400);
    expect((await u.api.post("/v1/auth/api-tokens/has%20space")).status).toBe(400);
    expect((await u.api.delete("/v1/auth/api-tokens/never-made")).status).toBe(404);
  });

  it("can't revoke another user's token", async () => {
    const other = await createUser(h);
    await other.api.post("/v1/auth/api-tokens/theirs");
    expect((await u.api.delete("/v1/auth/api-tokens/theirs")).status).toBe(404);
    expect(
      (await other.api.get("/v1/auth/api-tokens")).body.tokens.map((t: { name: string }) => t.name),
    ).toContain("theirs");
  });
});
