/**
 * Calls that make or remove database files in a location another node holds: forwarded to that
 * node, or refused with nothing changed when it can't be reached. One process here; the other
 * node is a fake recorded in the store (the real two-process case is test/service/multi-process).
 */
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LOCATIONS } from "../../src/config.js";
import { pipeline, sql } from "../helpers/dataplane.js";
import { createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

const [here, there] = DEFAULT_LOCATIONS.slice(0, 2).map((l) => l.code) as [string, string];
/** An address where nothing listens: a port taken and given back at the start of the file. */
let UNREACHABLE = "";

let h: TestShoal;
let user: TestUser;
let fake: Server;
let fakeUrl: string;
let keptJwt: string;
const seen: Array<{ method: string; url: string; headers: IncomingMessage["headers"]; body: string }> = [];

/** Points the node holding `there` at `url`. */
async function holderAt(url: string): Promise<void> {
  const at = new Date().toISOString();
  await h.shoal.deps.store.write(async (r) => {
    await r.nodes.delete("ghost");
    await r.nodes.register({ id: "ghost", url, version: "0.0.1", started_at: at, heartbeat_at: at });
    await r.nodes.claim("ghost", [there], at);
  });
}

beforeAll(async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  UNREACHABLE = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  h = await startTestShoal({ nodeId: "local", locations: DEFAULT_LOCATIONS.slice(0, 2) });
  user = await createUser(h);
  for (const [name, location] of [
    ["near", here],
    ["far", there],
  ]) {
    const r = await user.api.post(`/v1/organizations/${user.username}/groups`, { name, location });
    expect(r.status, r.text).toBe(200);
  }
  // A database made while this node still held `there` too.
  const kept = await user.api.post(`/v1/organizations/${user.username}/databases`, {
    name: "kept",
    group: "far",
  });
  expect(kept.status, kept.text).toBe(200);
  const minted = await user.api.post(`/v1/organizations/${user.username}/databases/kept/auth/tokens`);
  keptJwt = minted.body.jwt;
  // Hand `there` to another node, then restart: this node now holds `here` only.
  await h.shoal.deps.store.write((r) => r.nodes.delete("local"));
  await holderAt(UNREACHABLE);
  await h.restart();
  expect([...h.shoal.node.locations]).toEqual([here]);
  fake = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      res.writeHead(200, { "content-type": "application/json", "x-from": "fake" });
      res.end(JSON.stringify({ database: { DbId: "from-the-holder", Hostname: "h", Name: "n" } }));
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => fake?.close(() => resolve()));
  await h?.close();
});

const dbNames = async () =>
  ((await user.api.get(`/v1/organizations/${user.username}/databases`)).body.databases as any[]).map(
    (d) => d.Name,
  );

describe("a call whose files another node keeps", () => {
  it("is served here when this node holds every location involved", async () => {
    const r = await user.api.post(`/v1/organizations/${user.username}/databases`, {
      name: "a",
      group: "near",
    });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("x-shoal-served-by")).toBeNull();
  });

  it("answers 503 naming the holder when it can't be reached, and creates nothing", async () => {
    await holderAt(UNREACHABLE);
    const r = await user.api.post(`/v1/organizations/${user.username}/databases`, {
      name: "b",
      group: "far",
    });
    expect(r.status, r.text).toBe(503);
    expect(r.body.error).toContain("node ghost");
    expect(r.body.error).toContain(UNREACHABLE);
    expect(r.body.error).toContain("nothing was changed");
    expect(await dbNames()).toEqual(["a", "kept"]);
  });

  it("sends the addition of a location another node holds to that node (a group may span nodes), changing nothing when it can't be reached", async () => {
    const r = await user.api.post(`/v1/organizations/${user.username}/groups/near/locations/${there}`);
    expect(r.status, r.text).toBe(503);
    expect(r.body.error).toContain("ghost");
    const g = await user.api.get(`/v1/organizations/${user.username}/groups/near`);
    expect(g.body.group.locations).toEqual([here]);
  });

  it("refuses to delete a group or a database whose files are elsewhere, keeping both", async () => {
    const g = await user.api.delete(`/v1/organizations/${user.username}/groups/far`);
    expect(g.status, g.text).toBe(503);
    const d = await user.api.delete(`/v1/organizations/${user.username}/databases/kept`);
    expect(d.status, d.text).toBe(503);
    expect((await user.api.get(`/v1/organizations/${user.username}/groups/far`)).status).toBe(200);
    expect(await dbNames()).toEqual(["a", "kept"]);
  });

  it("answers a data-plane request for a database whose holder can't be reached with 503, not with this node's stale file", async () => {
    const r = await pipeline(`${h.url}/db/${user.username}/kept/`, keptJwt, {
      requests: [sql("select 1")],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(r.body.code).toBe("DATABASE_NODE_UNREACHABLE");
    expect(r.body.message).toContain(`served by node ghost (${UNREACHABLE})`);
  });

  it("sends a data-plane request on to the holder with the client's headers, Host included, and relays its answer", async () => {
    await holderAt(fakeUrl);
    const url = `${h.url}/db/${user.username}/kept/v2/pipeline?q=1`;
    const body = JSON.stringify({ requests: [sql("select 1")] });
    const send = () =>
      fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${keptJwt}`,
          "content-type": "application/json",
          "x-turso-encryption-key": "a-key-for-the-holder",
          "x-request-id": "trace-0001",
          // A client can't pass off an address of its own choosing.
          "x-shoal-client": "203.0.113.9 ghost 0 forged",
        },
        body,
      });
    // Which node holds a location is cached for a second: wait for the new holder to show.
    await expect.poll(async () => (await send()).headers.get("x-from"), { timeout: 5000 }).toBe("fake");
    seen.length = 0;
    const r = await send();
    expect(r.status).toBe(200);
    expect(r.headers.get("x-shoal-served-by")).toBe("ghost");
    expect(((await r.json()) as any).database.DbId).toBe("from-the-holder");
    expect(seen).toHaveLength(1);
    const got = seen[0]!;
    expect(got).toMatchObject({ method: "POST", url: `/db/${user.username}/kept/v2/pipeline?q=1`, body });
    expect(got.headers.host).toBe(new URL(h.url).host);
    expect(got.headers.authorization).toBe(`Bearer ${keptJwt}`);
    expect(got.headers["x-turso-encryption-key"]).toBe("a-key-for-the-holder");
    expect(got.headers["x-request-id"]).toBe("trace-0001");
    expect(got.headers["x-shoal-forwarded-by"]).toBe("local");
    expect(got.headers["x-shoal-client"]).toMatch(/^127\.0\.0\.1 local \d+ [A-Za-z0-9_-]{43}$/);
  });

  it("answers 502, saying a write may have been applied, when the holder fails after receiving a data-plane request", async () => {
    const dropping = createServer((req) => req.socket.destroy());
    await new Promise<void>((resolve) => dropping.listen(0, "127.0.0.1", resolve));
    try {
      await holderAt(`http://127.0.0.1:${(dropping.address() as AddressInfo).port}`);
      const ask = () =>
        pipeline(`${h.url}/db/${user.username}/kept/`, keptJwt, { requests: [sql("select 1")] });
      await expect.poll(async () => (await ask()).status, { timeout: 5000 }).toBe(502);
      const r = await ask();
      expect(r.body.code).toBe("DATABASE_NODE_FAILED");
      expect(r.body.message).toContain("may or may not have taken effect");
    } finally {
      await new Promise<void>((resolve) => dropping.close(() => resolve()));
      await holderAt(UNREACHABLE);
    }
  });

  it("answers 421 with the holder's address to a request that was already forwarded once", async () => {
    const r = await user.api.post(
      `/v1/organizations/${user.username}/databases`,
      { name: "b", group: "far" },
      { headers: { "x-shoal-forwarded-by": "elsewhere" } },
    );
    expect(r.status, r.text).toBe(421);
    expect(r.body).toEqual({
      error: expect.stringContaining(`send this request to ${UNREACHABLE}`),
      code: "misdirected",
    });
    expect(await dbNames()).toEqual(["a", "kept"]);
  });

  it("is forwarded to the holder with the caller's token and body, and answers with its response", async () => {
    await holderAt(fakeUrl);
    seen.length = 0;
    const r = await user.api.post(`/v1/organizations/${user.username}/databases?x=1`, {
      name: "b",
      group: "far",
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.database.DbId).toBe("from-the-holder");
    expect(r.headers.get("x-shoal-served-by")).toBe("ghost");
    expect(r.headers.get("x-from")).toBe("fake");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      method: "POST",
      url: `/v1/organizations/${user.username}/databases?x=1`,
      body: JSON.stringify({ name: "b", group: "far" }),
    });
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${user.token}`);
    expect(seen[0]!.headers["x-shoal-forwarded-by"]).toBe("local");
    // One request id on both nodes, though the caller sent none.
    expect(seen[0]!.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.headers.get("x-request-id")).toBe(seen[0]!.headers["x-request-id"]);
    // Nothing was made here: the holder alone makes the database.
    expect(await dbNames()).toEqual(["a", "kept"]);
  });

  it("forwards a request sent with Expect and Connection-listed headers, without them", async () => {
    seen.length = 0;
    const body = JSON.stringify({ name: "d", group: "far" });
    const url = new URL(`/v1/organizations/${user.username}/databases`, h.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${user.token}`,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          expect: "100-continue",
          connection: "keep-alive, x-hop",
          "x-hop": "only for the first hop",
        },
      });
      req.on("continue", () => req.end(body));
      req.on("response", (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject);
    });
    expect(status).toBe(200);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body).toBe(body);
    expect(seen[0]!.headers.expect).toBeUndefined();
    expect(seen[0]!.headers["x-hop"]).toBeUndefined();
    expect(seen[0]!.headers["x-forwarded-host"]).toBe(url.host);
  });

  it("answers 502, saying the outcome is unknown, when the holder fails after receiving the call", async () => {
    const dropping = createServer((req) => req.socket.destroy());
    await new Promise<void>((resolve) => dropping.listen(0, "127.0.0.1", resolve));
    try {
      await holderAt(`http://127.0.0.1:${(dropping.address() as AddressInfo).port}`);
      const r = await user.api.post(`/v1/organizations/${user.username}/databases`, {
        name: "e",
        group: "far",
      });
      expect(r.status, r.text).toBe(502);
      expect(r.body.error).toContain("may or may not have taken effect");
    } finally {
      await new Promise<void>((resolve) => dropping.close(() => resolve()));
      await holderAt(fakeUrl);
    }
  });

  it("is not forwarded when the caller may not make the call at all", async () => {
    seen.length = 0;
    const stranger = await createUser(h);
    const r = await stranger.api.post(`/v1/organizations/${user.username}/databases`, {
      name: "c",
      group: "far",
    });
    expect(r.status).toBe(403);
    expect(seen).toHaveLength(0);
  });
});
