import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let behindProxy: TestShoal;
let direct: TestShoal;

beforeAll(async () => {
  // The test's requests come from 127.0.0.1: a trusted proxy for one Shoal, a client for the other.
  [behindProxy, direct] = await Promise.all([
    startTestShoal({ trustedProxies: ["127.0.0.1/32", "::1/128"] }),
    startTestShoal(),
  ]);
  for (const h of [behindProxy, direct]) {
    const api = client(h.url, h.adminToken);
    expect(
      (await api.post("/v1/organizations/admin/groups", { name: "g", location: "aws-us-east-1" })).status,
    ).toBe(200);
    expect((await api.post("/v1/organizations/admin/databases", { name: "d", group: "g" })).status).toBe(200);
  }
});
afterAll(async () => {
  await Promise.all([behindProxy?.close(), direct?.close()]);
});

const httpUrl = async (h: TestShoal, headers: Record<string, string>) =>
  (await client(h.url, h.adminToken).get("/v1/organizations/admin/databases/d", { headers })).body.database
    .http_url;

describe("database URLs behind a reverse proxy", () => {
  it("names the URL clients use when a trusted proxy says it terminated TLS", async () => {
    const url = await httpUrl(behindProxy, {
      "x-forwarded-proto": "https",
      "x-forwarded-host": "shoal.example.com",
    });
    expect(url).toBe("https://shoal.example.com/db/admin/d/");
    // Only the scheme: the host stays the one the request named.
    const port = new URL(behindProxy.url).port;
    expect(await httpUrl(behindProxy, { "x-forwarded-proto": "HTTPS, http" })).toBe(
      `https://127.0.0.1:${port}/db/admin/d/`,
    );
  });

  it("ignores a forwarded host that isn't a host, and anything from a peer that isn't a trusted proxy", async () => {
    const port = new URL(behindProxy.url).port;
    expect(await httpUrl(behindProxy, { "x-forwarded-host": "evil.example/path?x=" })).toBe(
      `http://127.0.0.1:${port}/db/admin/d/`,
    );
    const directPort = new URL(direct.url).port;
    expect(
      await httpUrl(direct, { "x-forwarded-proto": "https", "x-forwarded-host": "shoal.example.com" }),
    ).toBe(`http://127.0.0.1:${directPort}/db/admin/d/`);
  });
});
