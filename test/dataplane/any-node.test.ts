/**
 * Any node answers any database: two `shoal` processes, each with its own data folder, share one
 * real PostgreSQL. Node A starts first and holds every location; node B holds none, so every
 * data-plane request sent to B is served by A through B, with the official clients. The
 * process case runs once (sqlite project): it starts its own PostgreSQL either way.
 */
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { connect } from "@tursodatabase/sync";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { loadOrCreateSigningKey } from "../../src/lib/signing-keys.js";
import { ownerOf } from "../../src/shards/ownership.js";
import { pipeline, sql } from "../helpers/dataplane.js";
import { type Client, client } from "../helpers/http.js";
import { scrape } from "../helpers/metrics.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { type ShoalProcess, spawnShoal } from "../helpers/process.js";
import { replicaClient } from "../helpers/replica-client.js";
import { ADMIN_TOKEN } from "../helpers/shoal.js";
import { localFolder, localRows, pullRaw } from "../helpers/turso-sync.js";

let server: PostgresServer;
const dirs: string[] = [];
let a: ShoalProcess;
let b: ShoalProcess;
let owner: Client;
let jwt: string;
let folder: Awaited<ReturnType<typeof localFolder>>;
const ORG = "roamer";
const DB = "notes";
const HOST = `${DB}-${ORG}.shoal.test`;
const portOf = (p: ShoalProcess) => new URL(p.url).port;
/** The database through node B, by path and by hostname, over HTTP and WebSocket. */
const viaB = () => ({
  httpPath: `${b.url}/db/${ORG}/${DB}/`,
  wsPath: `${b.url.replace("http:", "ws:")}/db/${ORG}/${DB}`,
  httpHost: `http://${HOST}:${portOf(b)}`,
  wsHost: `ws://${HOST}:${portOf(b)}`,
});

/** One request on `agent`, whose one kept-alive socket every request shares. */
function postOn(
  agent: http.Agent,
  url: string,
  token: string,
  body: unknown,
): Promise<{ status: number; text: string; servedBy: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { agent, method: "POST", headers: { authorization: `Bearer ${token}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString(),
            servedBy: res.headers["x-shoal-served-by"],
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

async function dataDir(): Promise<string> {
  const d = await mkdtemp(path.join(tmpdir(), "shoal-any-node-"));
  dirs.push(d);
  return d;
}

beforeAll(async () => {
  server = await startPostgres();
  const metadataUrl = await server.newDatabase();
  const [dirA, dirB] = [await dataDir(), await dataDir()];
  await loadOrCreateSigningKey(path.join(dirA, "keys"), "db-tokens");
  await loadOrCreateSigningKey(path.join(dirA, "keys"), "api-tokens");
  await cp(path.join(dirA, "keys"), path.join(dirB, "keys"), { recursive: true });
  const env = (dir: string, id: string) => ({
    SHOAL_DATA_DIR: dir,
    SHOAL_METADATA_URL: metadataUrl,
    SHOAL_ADMIN_TOKEN: ADMIN_TOKEN,
    SHOAL_NODE_ID: id,
    SHOAL_DB_DOMAIN: "shoal.test",
  });
  // A first: it takes every location, and B none.
  a = await spawnShoal(env(dirA, "node-a"));
  // B believes X-Forwarded-For from loopback; A doesn't, so only B's signed word can tell A.
  // Two shards at B: a request must leave B from the shard that read it, whichever owns the database.
  b = await spawnShoal({ ...env(dirB, "node-b"), SHOAL_TRUSTED_PROXIES: "127.0.0.1", SHOAL_WORKERS: "2" });
  const admin = client(a.url, ADMIN_TOKEN);
  const u = await admin.post("/v1/admin/users", { username: ORG, email: `${ORG}@example.com` });
  expect(u.status, u.text).toBe(200);
  owner = client(b.url, u.body.token);
  expect((await owner.post(`/v1/organizations/${ORG}/groups`, { name: "default" })).status).toBe(200);
  const made = await owner.post(`/v1/organizations/${ORG}/databases`, { name: DB });
  expect(made.status, made.text).toBe(200);
  expect(made.body.database.Hostname).toBe(HOST);
  jwt = (await owner.post(`/v1/organizations/${ORG}/databases/${DB}/auth/tokens`)).body.jwt;
  const direct = createClient({ url: `${a.url}/db/${ORG}/${DB}/`, authToken: jwt });
  await direct.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
  await direct.execute("INSERT INTO notes (body) VALUES ('first')");
  direct.close();
  folder = await localFolder();
}, 120_000);

afterAll(async () => {
  for (const p of [a, b]) p?.proc.kill("SIGKILL");
  await folder?.cleanup();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  await server?.stop();
});

const count = async (url: string) => {
  const c = createClient({ url, authToken: jwt });
  try {
    return Number((await c.execute("SELECT count(*) AS n FROM notes")).rows[0]!.n);
  } finally {
    c.close();
  }
};

describe("a database held by node A, asked through node B", () => {
  it("holds every location on A and none on B", async () => {
    const nodes = (await client(b.url, ADMIN_TOKEN).get("/v1/admin/nodes")).body.nodes as Array<{
      id: string;
      locations: string[];
    }>;
    expect(nodes.find((n) => n.id === "node-b")?.locations).toEqual([]);
    expect(nodes.find((n) => n.id === "node-a")?.locations.length).toBeGreaterThan(0);
  });

  it("serves reads, writes and batches over HTTP, by path and by hostname, with A's answer", async () => {
    const before = await count(`${a.url}/db/${ORG}/${DB}/`);
    for (const url of [viaB().httpPath, viaB().httpHost]) {
      const c = createClient({ url, authToken: jwt });
      await c.execute({ sql: "INSERT INTO notes (body) VALUES (?)", args: [`via ${url}`] });
      const batch = await c.batch(
        ["INSERT INTO notes (body) VALUES ('batched')", "SELECT count(*) AS n FROM notes"],
        "write",
      );
      expect(batch[1]!.rows[0]!.n).toBeGreaterThan(before);
      c.close();
    }
    expect(await count(`${a.url}/db/${ORG}/${DB}/`)).toBe(before + 4);
    // v3 cursor too (the Rust client's and @tursodatabase/serverless's way).
    const r = await fetch(`${viaB().httpPath}v3/cursor`, {
      method: "POST",
      headers: { authorization: `Bearer ${jwt}`, "content-type": "application/json" },
      body: JSON.stringify({ baton: null, batch: { steps: [{ stmt: { sql: "SELECT 42 AS x" } }] } }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-shoal-served-by")).toBe("node-a");
    expect(await r.text()).toContain("42");
  });

  it("serves an interactive transaction over WebSocket, by path and by hostname", async () => {
    for (const url of [viaB().wsPath, viaB().wsHost]) {
      const c = createClient({ url, authToken: jwt });
      const tx = await c.transaction("write");
      await tx.execute("INSERT INTO notes (body) VALUES ('in tx')");
      const seen = await tx.execute("SELECT count(*) AS n FROM notes WHERE body = 'in tx'");
      await tx.rollback();
      expect(Number(seen.rows[0]!.n)).toBeGreaterThan(0);
      const tx2 = await c.transaction("write");
      await tx2.execute("INSERT INTO notes (body) VALUES ('committed over ws')");
      await tx2.commit();
      c.close();
    }
    const direct = createClient({ url: `${a.url}/db/${ORG}/${DB}/`, authToken: jwt });
    const rows = await direct.execute("SELECT body FROM notes WHERE body IN ('in tx', 'committed over ws')");
    expect(rows.rows.map((r) => r.body)).toEqual(["committed over ws", "committed over ws"]);
    direct.close();
  });

  it("leaves the token to the holder: a bad one is refused there, over HTTP and WebSocket", async () => {
    const r = await pipeline(viaB().httpPath, `${jwt}x`, { requests: [sql("select 1")] });
    expect(r.status).toBe(401);
    const c = createClient({ url: viaB().wsPath, authToken: "not-a-token" });
    await expect(c.execute("select 1")).rejects.toThrow(/token/i);
    c.close();
  });

  it("syncs an embedded replica (libsql, sync protocol v2) through B, writes included", async () => {
    const r = replicaClient();
    try {
      await r.open(folder.file("replica.db"), `${b.url}/db/${ORG}/${DB}`, jwt);
      await r.sync();
      const n = await count(`${a.url}/db/${ORG}/${DB}/`);
      expect(await r.query("SELECT count(*) FROM notes")).toEqual([[n]]);
      await r.run("INSERT INTO notes (body) VALUES ('from the replica')");
      expect(await count(`${a.url}/db/${ORG}/${DB}/`)).toBe(n + 1);
    } finally {
      await r.terminate();
    }
  });

  it("pulls and pushes with @tursodatabase/sync through B", async () => {
    const local = await connect({ path: folder.file("turso.db"), url: viaB().httpHost, authToken: jwt });
    const n = await count(`${a.url}/db/${ORG}/${DB}/`);
    expect(await localRows(local, "SELECT count(*) AS n FROM notes")).toEqual([{ n }]);
    const direct = createClient({ url: `${a.url}/db/${ORG}/${DB}/`, authToken: jwt });
    await direct.execute("INSERT INTO notes (body) VALUES ('pulled')");
    expect(await local.pull()).toBe(true);
    await local.exec("INSERT INTO notes (body) VALUES ('pushed')");
    await local.push();
    expect((await direct.execute("SELECT count(*) AS n FROM notes")).rows[0]!.n).toBe(n + 2);
    direct.close();
    await local.close();
  });

  it("holds a pull-updates long poll open through B, past the nodes' idle-connection timeout, until a write wakes it", async () => {
    const base = `${b.url}/db/${ORG}/${DB}`;
    const first = await pullRaw(base, jwt);
    expect(first.status).toBe(200);
    const waiting = pullRaw(base, jwt, { clientRevision: first.header.revision, longPollMs: 30_000 });
    // Longer than the 4 s after which an idle connection between nodes is dropped.
    await new Promise((r) => setTimeout(r, 5000));
    const direct = createClient({ url: `${a.url}/db/${ORG}/${DB}/`, authToken: jwt });
    await direct.execute("INSERT INTO notes (body) VALUES ('wakes the poll')");
    direct.close();
    const woke = await waiting;
    expect(woke.status).toBe(200);
    expect(woke.header.revision).not.toBe(first.header.revision);
  });

  it("streams /dump through B", async () => {
    const r = await fetch(`${viaB().httpPath}dump`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text).toContain("CREATE TABLE notes");
    expect(text).toContain("'from the replica'");
  });

  it("streams a database upload (several MiB) through B to A", async () => {
    const made = await owner.post(`/v1/organizations/${ORG}/databases`, {
      name: "uploaded",
      seed: { type: "database_upload" },
    });
    expect(made.status, made.text).toBe(200);
    const token = (await owner.post(`/v1/organizations/${ORG}/databases/uploaded/auth/tokens`)).body.jwt;
    const file = folder.file("upload.db");
    const local = new Database(file);
    local.exec("PRAGMA journal_mode = WAL; CREATE TABLE blobs (b BLOB)");
    local.exec("INSERT INTO blobs SELECT randomblob(4096) FROM generate_series(1, 1000)");
    local.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    local.close();
    const body = await readFile(file);
    expect(body.length).toBeGreaterThan(4_000_000);
    const r = await fetch(`${b.url}/db/${ORG}/uploaded/v1/upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
      body,
    });
    expect(r.status, await r.clone().text()).toBe(200);
    const c = createClient({ url: `${b.url}/db/${ORG}/uploaded/`, authToken: token });
    expect((await c.execute("SELECT count(*) AS n FROM blobs")).rows[0]!.n).toBe(1000);
    c.close();
  });

  it("checks the database's IP allowlist at A against the client, not against B", async () => {
    const configuration = `/v1/organizations/${ORG}/databases/${DB}/configuration`;
    expect((await owner.patch(configuration, { allowed_ips: ["203.0.113.7"] })).status).toBe(200);
    try {
      const ask = (base: string, headers: Record<string, string>) =>
        fetch(`${base}v2/pipeline`, {
          method: "POST",
          headers: { authorization: `Bearer ${jwt}`, "content-type": "application/json", ...headers },
          body: JSON.stringify({ requests: [sql("select 1")] }),
        });
      const client = { "x-forwarded-for": "203.0.113.7" };
      // B trusts its loopback peer's X-Forwarded-For and tells A, signed.
      await expect.poll(async () => (await ask(viaB().httpPath, client)).status, { timeout: 5000 }).toBe(200);
      expect((await ask(viaB().httpPath, {})).status).toBe(403);
      // A itself believes neither the header nor a forged proof.
      const direct = `${a.url}/db/${ORG}/${DB}/`;
      expect((await ask(direct, client)).status).toBe(403);
      const forged = { "x-shoal-client": `203.0.113.7 node-b ${Date.now()} AAAA` };
      expect((await ask(direct, forged)).status).toBe(403);
    } finally {
      await owner.patch(configuration, { allowed_ips: [] });
    }
  });

  it("sends requests for A's databases on from whichever of B's shards read them, over one shared connection", async () => {
    // Databases until both of B's shards own one: the connection's shard reads requests for both.
    const names: string[] = [];
    const owners = new Set<number>();
    while (owners.size < 2 || names.length < 4) {
      const name = `spread-${names.length}`;
      const made = await owner.post(`/v1/organizations/${ORG}/databases`, { name });
      expect(made.status, made.text).toBe(200);
      names.push(name);
      owners.add(ownerOf(made.body.database.DbId, 2));
    }
    const group = await owner.post(`/v1/organizations/${ORG}/groups/default/auth/tokens`);
    expect(group.status, group.text).toBe(200);
    const hopsAtB = async () => {
      const m = await scrape(b.url, ADMIN_TOKEN);
      return (
        m.value("shoal_shard_hops_total", { way: "sql" }) + m.value("shoal_shard_hops_total", { way: "http" })
      );
    };
    const before = await hopsAtB();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let round = 0; round < 3; round++)
        for (const name of names) {
          const r = await postOn(agent, `${b.url}/db/${ORG}/${name}/v2/pipeline`, group.body.jwt, {
            requests: [sql(`SELECT '${name}' AS db`)],
          });
          expect(r.status, r.text).toBe(200);
          expect(r.servedBy).toBe("node-a");
          expect(r.text).toContain(name);
        }
    } finally {
      agent.destroy();
    }
    expect(await hopsAtB()).toBe(before);
  });

  it("refuses a request another node already forwarded, with 421, over HTTP and WebSocket", async () => {
    const r = await fetch(`${viaB().httpPath}v2/pipeline`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${jwt}`,
        "content-type": "application/json",
        "x-shoal-forwarded-by": "node-c",
      },
      body: JSON.stringify({ requests: [sql("select 1")] }),
    });
    expect(r.status).toBe(421);
    const body = (await r.json()) as { code: string; message: string };
    expect(body.code).toBe("DATABASE_ELSEWHERE");
    expect(body.message).toContain("node node-a");
    expect(body.message).toContain("node node-c sent this request here already");
    const ws = new WebSocket(viaB().wsPath, ["hrana3"], { headers: { "x-shoal-forwarded-by": "node-c" } });
    const status = await new Promise<number>((resolve) => {
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("open", () => resolve(101));
    });
    expect(status).toBe(421);
  });

  it("answers 503 naming the holder, once A is gone, and sends nothing", async () => {
    // A raw WebSocket through B to A: when A goes, B closes the client's side too.
    const ws = new WebSocket(viaB().wsPath, ["hrana3"]);
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
    a.proc.kill("SIGKILL");
    await a.exited;
    expect(await closed).toBe(1011);
    const insert = () =>
      pipeline(viaB().httpPath, jwt, { requests: [sql("INSERT INTO notes (body) VALUES ('lost')")] });
    let r = await insert();
    // B's pooled connection to A may not have seen A's end yet (seen once in CI under load): a
    // request on it meets a reset B can't tell from A failing after it took the request, and B
    // says so (502 DATABASE_NODE_FAILED). Once B has seen it, the answer is the one tested here.
    if (r.status === 502 && r.body.code === "DATABASE_NODE_FAILED") r = await insert();
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(r.body.code).toBe("DATABASE_NODE_UNREACHABLE");
    expect(r.body.message).toContain(`served by node node-a (${a.url}), which can't be reached`);
    expect(r.body.message).toContain("nothing changed");
    const c = createClient({ url: viaB().wsHost, authToken: jwt });
    await expect(c.execute("select 1")).rejects.toThrow(/503/);
    c.close();
  });
});
