/**
 * Backups end to end with real `shoal` processes, a real PostgreSQL store and a real S3-compatible
 * server (s3rver): rows written through @libsql/client are shipped, the node's data folder is
 * lost, a fresh node on the same store restores them from the bucket, and a point-in-time restore
 * brings back exactly the earlier rows.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient, type Client as SqlClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, client } from "../helpers/http.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { runShoalExpectingFailure, type ShoalProcess, spawnShoal } from "../helpers/process.js";
import { startTestS3, type TestS3 } from "../helpers/s3-server.js";
import { ADMIN_TOKEN } from "../helpers/shoal.js";

const INTERVAL_MS = 200;
let pg: PostgresServer;
let s3: TestS3;
let metadataUrl: string;
const dirs: string[] = [];
const procs: ShoalProcess[] = [];

async function dataDir(): Promise<string> {
  const d = await mkdtemp(path.join(tmpdir(), "shoal-backup-svc-"));
  dirs.push(d);
  return d;
}

const env = (dir: string, extra: Record<string, string> = {}) => ({
  SHOAL_DATA_DIR: dir,
  SHOAL_METADATA_URL: metadataUrl,
  SHOAL_ADMIN_TOKEN: ADMIN_TOKEN,
  SHOAL_NODE_ID: "node-a",
  SHOAL_LOG_LEVEL: "info",
  SHOAL_BACKUP_URL: `s3://${s3.bucket}/svc`,
  SHOAL_BACKUP_ENDPOINT: s3.endpoint,
  SHOAL_BACKUP_ACCESS_KEY_ID: "S3RVER",
  SHOAL_BACKUP_SECRET_ACCESS_KEY: "S3RVER",
  SHOAL_BACKUP_INTERVAL_MS: String(INTERVAL_MS),
  ...extra,
});

async function start(
  dir: string,
  extra: Record<string, string> = {},
): Promise<{ node: ShoalProcess; admin: Client }> {
  const node = await spawnShoal(env(dir, extra));
  procs.push(node);
  return { node, admin: client(node.url, ADMIN_TOKEN) };
}

async function values(c: SqlClient): Promise<number[]> {
  return (await c.execute("SELECT id FROM t ORDER BY id")).rows.map((r) => Number(r.id));
}

interface Status {
  delay_ms: number;
  databases: Array<{ name: string; generation: number | null; frame: number | null; delay_ms: number }>;
}

/** Waits until the node says the bucket has everything of `name` committed so far. */
async function shipped(admin: Client, name: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const s = (await admin.get("/v1/admin/backups")).body as Status;
    const d = s.databases.find((x) => x.name === name);
    if (d && d.frame !== null && d.delay_ms === 0) return;
    if (Date.now() > deadline) throw new Error(`not shipped: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  [pg, s3] = await Promise.all([startPostgres(), startTestS3()]);
  metadataUrl = await pg.newDatabase();
}, 120_000);

afterAll(async () => {
  for (const p of procs) p.proc.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  await s3?.close();
  await pg?.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("backups of a running node", () => {
  it("restores a lost node's databases on a fresh node, and a database to an earlier moment", async () => {
    const dirA = await dataDir();
    const a = await start(dirA);
    expect(
      (await a.admin.post("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" }))
        .status,
    ).toBe(200);
    expect(
      (await a.admin.post("/v1/organizations/admin/databases", { name: "ledger", group: "default" })).status,
    ).toBe(200);
    const jwt = (await a.admin.post("/v1/organizations/admin/databases/ledger/auth/tokens")).body
      .jwt as string;
    const sqlA = createClient({ url: `${a.node.url}/db/admin/ledger/`, authToken: jwt });
    await sqlA.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    for (let i = 1; i <= 50; i++)
      await sqlA.execute({ sql: "INSERT INTO t VALUES (?, ?)", args: [i, `row ${i}`] });
    await shipped(a.admin, "ledger");
    // The shipper's delay is a metric once backups are on (and absent when they are off).
    const scrape = await fetch(`${a.node.url}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(await scrape.text()).toMatch(/^shoal_backup_delay_seconds \d+(\.\d+)?$/m);
    await new Promise((r) => setTimeout(r, 20));
    const middle = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));

    // Steady writes; the node's stated delay says which of them the bucket must have.
    const acked: Array<{ id: number; at: number }> = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 51; writing; i++) {
        try {
          await sqlA.execute({ sql: "INSERT INTO t VALUES (?, ?)", args: [i, `row ${i}`] });
          acked.push({ id: i, at: Date.now() });
        } catch {
          return;
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 1500));
    const asked = Date.now();
    const status = (await a.admin.get("/v1/admin/backups")).body as Status & { enabled: boolean };
    expect(status.enabled).toBe(true);
    a.node.proc.kill("SIGKILL");
    expect(await a.node.exited).toBe("SIGKILL");
    writing = false;
    await writer;
    sqlA.close();
    const mustHave = acked.filter((w) => w.at < asked - status.delay_ms).map((w) => w.id);
    expect(mustHave.length).toBeGreaterThan(10);

    // The disk is lost; the operator kept the keys folder. A fresh node takes the same node id.
    const dirB = await dataDir();
    await cp(path.join(dirA, "keys"), path.join(dirB, "keys"), { recursive: true });
    await rm(dirA, { recursive: true, force: true });
    const b = await start(dirB);
    const before = (await b.admin.get("/v1/admin/backups")).body as Status;
    expect(before.databases).toEqual([]);
    const restored = await b.admin.post("/v1/admin/backups/restore-missing", {});
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(restored.body.databases).toMatchObject([{ organization: "admin", name: "ledger", error: null }]);
    expect(restored.body.databases[0].restored.replaced).toBe(false);

    const sqlB = createClient({ url: `${b.node.url}/db/admin/ledger/`, authToken: jwt });
    const rows = await values(sqlB);
    for (let i = 1; i <= 50; i++) expect(rows).toContain(i);
    for (const id of mustHave) expect(rows).toContain(id);

    // Point in time: exactly the rows committed before `middle`.
    const pit = await b.admin.post("/v1/admin/backups/admin/ledger/restore", { timestamp: middle });
    expect(pit.status, JSON.stringify(pit.body)).toBe(200);
    expect(pit.body.restored.replaced).toBe(true);
    expect(await values(sqlB)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const audit = JSON.stringify((await b.admin.get("/v1/organizations/admin/audit-logs")).body);
    expect(audit).toContain("database ledger restored from the backup bucket");

    // Shipping goes on after a restore, and the bucket lists what it can restore.
    await sqlB.execute("INSERT INTO t VALUES (1000, 'after')");
    await shipped(b.admin, "ledger");
    const points = await b.admin.get("/v1/admin/backups/admin/ledger");
    expect(points.status).toBe(200);
    expect(Date.parse(points.body.earliest)).toBeLessThanOrEqual(Date.parse(middle));
    expect(points.body.snapshots.length).toBeGreaterThan(0);
    const latest = await b.admin.post("/v1/admin/backups/admin/ledger/restore", {});
    expect(latest.status).toBe(200);
    expect(await values(sqlB)).toEqual([...Array.from({ length: 50 }, (_, i) => i + 1), 1000]);

    await checkBadInput(b.admin, sqlB, b.node.url);
    await checkFailedRestores(b.admin, sqlB, points.body.id as string);
    sqlB.close();

    // A database created later is shipped too; a deleted one stops being shipped.
    expect(
      (await b.admin.post("/v1/organizations/admin/databases", { name: "scratch", group: "default" })).status,
    ).toBe(200);
    await shipped(b.admin, "scratch");
    expect((await b.admin.delete("/v1/organizations/admin/databases/scratch")).status).toBe(200);
    const deadline = Date.now() + 10_000;
    while (
      ((await b.admin.get("/v1/admin/backups")).body as Status).databases.some((d) => d.name === "scratch")
    ) {
      if (Date.now() > deadline) throw new Error("a deleted database is still shipped");
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 120_000);

  it("ships what is left when the node stops", async () => {
    metadataUrl = await pg.newDatabase();
    const dirA = await dataDir();
    // A pass at start, then none for a minute: only the last pass at shutdown can ship the rows.
    const a = await start(dirA, { SHOAL_BACKUP_INTERVAL_MS: "60000" });
    await a.admin.post("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" });
    expect(
      (await a.admin.post("/v1/organizations/admin/databases", { name: "late", group: "default" })).status,
    ).toBe(200);
    const jwt = (await a.admin.post("/v1/organizations/admin/databases/late/auth/tokens")).body.jwt as string;
    const sqlA = createClient({ url: `${a.node.url}/db/admin/late/`, authToken: jwt });
    await sqlA.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    for (let i = 1; i <= 30; i++) await sqlA.execute({ sql: "INSERT INTO t VALUES (?, ?)", args: [i, "x"] });
    sqlA.close();
    a.node.proc.kill("SIGTERM");
    expect(await a.node.exited).toBe(0);
    expect(a.node.output()).toContain("backup shipping started");

    const dirB = await dataDir();
    await cp(path.join(dirA, "keys"), path.join(dirB, "keys"), { recursive: true });
    const b = await start(dirB);
    const restored = await b.admin.post("/v1/admin/backups/restore-missing", {});
    expect(restored.body.databases).toMatchObject([{ name: "late", error: null }]);
    const sqlB = createClient({ url: `${b.node.url}/db/admin/late/`, authToken: jwt });
    expect(await values(sqlB)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    sqlB.close();
    expect(a.node.output() + b.node.output()).not.toMatch(/secretAccessKey|S3RVER/);
  }, 60_000);

  it("refuses a bad backup setting at start, naming it and never echoing a secret", async () => {
    const dir = await dataDir();
    const r = await runShoalExpectingFailure({
      SHOAL_DATA_DIR: dir,
      SHOAL_BACKUP_URL: "http://not-s3/bucket",
      SHOAL_BACKUP_SECRET_ACCESS_KEY: "very-secret-value-123",
      SHOAL_BACKUP_INTERVAL_MS: "10",
    });
    expect(r.code).toBe(2);
    expect(r.output).toMatch(/SHOAL_BACKUP_URL: an S3 URL/);
    expect(r.output).toMatch(/SHOAL_BACKUP_INTERVAL_MS: a whole number from 50/);
    expect(r.output).toMatch(/SHOAL_BACKUP_SECRET_ACCESS_KEY: set SHOAL_BACKUP_ACCESS_KEY_ID/);
    expect(r.output).not.toContain("very-secret-value-123");
  });
});

/** Bad requests get a clear 4xx and change nothing; only the administrator sees anything. */
async function checkBadInput(admin: Client, sql: SqlClient, url: string): Promise<void> {
  const rows = await values(sql);
  const restore = "/v1/admin/backups/admin/ledger/restore";
  const cases: Array<[string, unknown, number, RegExp]> = [
    [restore, { timestamp: "yesterday" }, 400, /^invalid timestamp: parsing time "yesterday"/],
    [restore, { timestamp: "2999-01-01T00:00:00Z" }, 400, /is in the future/],
    [restore, { timestamp: "2001-01-01T00:00:00Z" }, 400, /oldest restorable moment is \d{4}-/],
    [restore, { timestamp: 5 }, 400, /timestamp/],
    [restore, { timestmap: "2026-01-01T00:00:00Z" }, 400, /timestmap/],
    ["/v1/admin/backups/admin/nope/restore", {}, 404, /database nope not found in organization admin/],
    ["/v1/admin/backups/nobody/ledger/restore", {}, 404, /organization nobody not found/],
    ["/v1/admin/backups/restore-missing", { timestamp: "2999-01-01T00:00:00Z" }, 400, /future/],
  ];
  for (const [p, body, status, message] of cases) {
    const r = await admin.post(p, body);
    expect(r.status, `${p} ${JSON.stringify(body)}`).toBe(status);
    expect(r.body.error).toMatch(message);
  }
  expect((await admin.get("/v1/admin/backups/admin/nope")).status).toBe(404);
  expect(await values(sql)).toEqual(rows);

  expect((await client(url, null).get("/v1/admin/backups")).status).toBe(401);
  const user = await admin.post("/v1/admin/users", { username: "someone", email: "someone@example.com" });
  expect(user.status).toBe(200);
  const other = client(url, user.body.token as string);
  expect((await other.get("/v1/admin/backups")).status).toBe(403);
  expect((await other.get("/v1/admin/backups/admin/ledger")).status).toBe(403);
  expect((await other.post(restore, {})).status).toBe(403);
  expect(await values(sql)).toEqual(rows);
}

/** A restore that can't finish (bucket down, a damaged object) says why and changes nothing. */
async function checkFailedRestores(admin: Client, sql: SqlClient, id: string): Promise<void> {
  const rows = await values(sql);
  const restore = "/v1/admin/backups/admin/ledger/restore";
  await s3.stop();
  const down = await admin.post(restore, {});
  await s3.start();
  expect(down.status).toBe(503);
  expect(down.body).toMatchObject({ code: "bucket_unavailable" });
  expect(down.body.error).toMatch(/^the backup bucket can't be used now \(nothing was changed\)/);
  expect(await values(sql)).toEqual(rows);

  // Every snapshot damaged, once shipping has settled: a snapshot shipped while the bucket was
  // down lands late, and a restore would use it instead of a damaged older one.
  await shipped(admin, "ledger");
  const bucket = s3.client("svc");
  const keys: string[] = [];
  for await (const o of bucket.list(`svc/${id}/`)) keys.push(o.key);
  const snapshots = keys.filter((k) => k.includes("/snapshot-"));
  expect(snapshots.length).toBeGreaterThan(0);
  for (const k of snapshots) await bucket.put(k, Buffer.from("not a snapshot"), { sha256: "0".repeat(64) });
  const damaged = await admin.post(restore, {});
  expect(damaged.status).toBe(502);
  expect(damaged.body).toMatchObject({ code: "restore_failed" });
  expect(damaged.body.error).toMatch(/^the backup in the bucket can't be restored \(nothing was changed\)/);
  expect(await values(sql)).toEqual(rows);
}
