/**
 * A database's `allowed_ips`: set and validated through the management API, enforced by the data
 * plane on HTTP, WebSocket and sync requests, never on the deployment's own replication.
 */
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LOCATIONS } from "../../src/config.js";
import { pipeline, setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
const [second, third] = DEFAULT_LOCATIONS.slice(1, 3).map((l) => l.code) as [string, string];

const configPath = () => `/v1/organizations/${db.org}/databases/${db.name}/configuration`;
const setAllowlist = (allowed_ips: unknown) => db.user.api.patch(configPath(), { allowed_ips });
const select = () => pipeline(db.urls.httpPath, db.token, { requests: [sql("select count(*) from t")] });

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  const r = await pipeline(db.urls.httpPath, db.token, {
    requests: [sql("create table t (x)"), sql("insert into t values (1)")],
  });
  expect(r.status).toBe(200);
  expect(
    (await db.user.api.post(`/v1/organizations/${db.org}/groups/default/locations/${second}`)).status,
  ).toBe(200);
});
afterAll(() => h.close());

describe("allowed_ips", () => {
  it("is empty by default, with no AWS PrivateLink endpoints", async () => {
    const r = await db.user.api.get(configPath());
    expect(r.body).toMatchObject({ allowed_ips: [], allowed_aws_vpc_ids: [] });
  });

  it("refuses a client outside the list over HTTP and WebSocket, with a code saying why", async () => {
    const r = await setAllowlist(["10.0.0.0/8", "2001:db8::/32"]);
    expect(r.status, r.text).toBe(200);
    expect(r.body.allowed_ips).toEqual(["10.0.0.0/8", "2001:db8::/32"]);
    const http = await select();
    expect(http.status).toBe(403);
    expect(JSON.stringify(http.body)).toContain("IP_NOT_ALLOWED");
    const ws = createClient({ url: db.urls.wsPath, authToken: db.token });
    try {
      await expect(ws.execute("select 1")).rejects.toThrow(/allowed_ips/);
    } finally {
      ws.close();
    }
    const sync = await fetch(`${db.urls.httpPath}info`, { headers: { authorization: `Bearer ${db.token}` } });
    // Sync answers a refusal with 401 (see dataplane/http.ts), its code still saying why.
    expect(sync.status).toBe(401);
    expect(await sync.text()).toContain("IP_NOT_ALLOWED");
  });

  it("ignores X-Forwarded-For when no trusted proxy is configured", async () => {
    const r = await fetch(`${db.urls.httpPath}v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${db.token}`, "x-forwarded-for": "10.1.2.3" },
      body: JSON.stringify({ requests: [sql("select 1")] }),
    });
    expect(r.status).toBe(403);
  });

  it("still lets the deployment build replicas of the database in a new location", async () => {
    const r = await db.user.api.post(`/v1/organizations/${db.org}/groups/default/locations/${third}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.group.locations).toContain(third);
  });

  it("serves a client whose address or block is listed", async () => {
    for (const list of [["127.0.0.1"], ["127.0.0.0/8"], ["192.0.2.1", "127.0.0.1/32"]]) {
      expect((await setAllowlist(list)).status).toBe(200);
      const r = await select();
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const ws = createClient({ url: db.urls.wsPath, authToken: db.token });
    try {
      expect((await ws.execute("select count(*) as n from t")).rows[0]?.n).toBe(1);
    } finally {
      ws.close();
    }
  });

  it("rejects malformed entries with a 400 naming the entry, and keeps the list it had", async () => {
    for (const bad of [["localhost"], ["10.0.0.0/33"], ["::1/129"], ["1.2.3.4/8/1"], [""], [7]]) {
      const r = await setAllowlist(bad);
      expect(r.status, r.text).toBe(400);
      expect(r.body.error).toMatch(/allowed_ips|expected string/);
    }
    const many = Array.from({ length: 257 }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
    expect((await setAllowlist(many)).status).toBe(400);
    expect((await db.user.api.get(configPath())).body.allowed_ips).toEqual(["192.0.2.1", "127.0.0.1/32"]);
  });

  it("is left alone by a PATCH that doesn't name it, and cleared by [] or null", async () => {
    await setAllowlist(["10.0.0.0/8"]);
    // The turso CLI sends the flags as null when it doesn't change them.
    const other = await db.user.api.patch(configPath(), { block_reads: false, allow_attach: null });
    expect(other.body.allowed_ips).toEqual(["10.0.0.0/8"]);
    expect((await select()).status).toBe(403);
    expect((await setAllowlist(null)).body.allowed_ips).toEqual([]);
    expect((await select()).status).toBe(200);
    await setAllowlist(["10.0.0.0/8"]);
    expect((await setAllowlist([])).body.allowed_ips).toEqual([]);
    expect((await select()).status).toBe(200);
  });

  it("accepts only an empty allowed_aws_vpc_ids list", async () => {
    const r = await db.user.api.patch(configPath(), { allowed_aws_vpc_ids: ["vpce-123"] });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("PrivateLink");
    expect((await db.user.api.patch(configPath(), { allowed_aws_vpc_ids: [] })).status).toBe(200);
  });

  it("can't be changed by someone outside the organization", async () => {
    const stranger = await setupDatabase(h);
    const r = await stranger.user.api.patch(configPath(), { allowed_ips: ["0.0.0.0/0"] });
    expect([403, 404]).toContain(r.status);
    expect((await db.user.api.get(configPath())).body.allowed_ips).toEqual([]);
  });
});

describe("allowed_ips behind a trusted proxy", () => {
  let behind: TestShoal;
  let proxied: TestDatabase;
  /** A request as a proxy on 127.0.0.1 sends it, with the chain of addresses it saw. */
  const via = (forwardedFor: string | undefined) =>
    fetch(`${proxied.urls.httpPath}v2/pipeline`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${proxied.token}`,
        ...(forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor }),
      },
      body: JSON.stringify({ requests: [sql("select 1")] }),
    }).then((r) => r.status);

  beforeAll(async () => {
    behind = await startTestShoal({ trustedProxies: ["127.0.0.1", "10.0.0.0/8"] });
    proxied = await setupDatabase(behind);
    const r = await proxied.user.api.patch(
      `/v1/organizations/${proxied.org}/databases/${proxied.name}/configuration`,
      { allowed_ips: ["203.0.113.7"] },
    );
    expect(r.status, r.text).toBe(200);
  });
  afterAll(() => behind.close());

  it("checks the client the proxy names, skipping trusted hops from the right", async () => {
    expect(await via("203.0.113.7")).toBe(200);
    expect(await via("203.0.113.7, 10.4.5.6")).toBe(200);
    expect(await via("198.51.100.1")).toBe(403);
  });

  it("never believes an address a client wrote left of the first untrusted hop", async () => {
    expect(await via("203.0.113.7, 198.51.100.9")).toBe(403);
  });

  it("refuses an unreadable entry and a request with no client address to check", async () => {
    expect(await via("not-an-ip")).toBe(403);
    // The proxy itself is the client when it names nobody: 127.0.0.1 is not on the list.
    expect(await via(undefined)).toBe(403);
  });
});
