import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;
let v: TestUser;

beforeAll(async () => {
  h = await startTestShoal({ rateLimit: 5, rateLimitWindowSeconds: 3600 });
  u = await createUser(h);
  v = await createUser(h);
});
afterAll(() => h.close());

describe("per-token rate limits", () => {
  it("answer 429 with Retry-After and RateLimit headers past the limit, per token", async () => {
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await u.api.get("/v1/auth/api-tokens");
      expect(r.status).toBe(200);
      seen.push(r.headers.get("ratelimit") ?? "");
      expect(r.headers.get("ratelimit-policy")).toBe('"per-token";q=5;w=3600');
    }
    expect(seen[0]).toMatch(/^"per-token";r=4;t=\d+$/);
    expect(seen[4]).toMatch(/^"per-token";r=0;t=\d+$/);
    const over = await u.api.get("/v1/auth/api-tokens");
    expect(over.status).toBe(429);
    expect(over.body.error).toContain("rate limit exceeded");
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    // A refused request changes nothing, and other tokens keep their own budget.
    expect((await u.api.post("/v1/auth/api-tokens/over-limit")).status).toBe(429);
    const mine = await v.api.get("/v1/auth/api-tokens");
    expect(mine.status).toBe(200);
    expect(mine.body.tokens.map((t: { name: string }) => t.name)).not.toContain("over-limit");
  });

  it("leave public routes without a token alone", async () => {
    for (let i = 0; i < 8; i++) expect((await fetch(`${h.url}/health`)).status).toBe(200);
  });
});
