/**
 * A location's worker lets go of a replica's files when told to, at once: a replica released for a
 * promotion (its file becomes a primary another process serves) or dropped must hold no
 * descriptor on its file, WAL or shared memory, even after reads prepared statements on it. A
 * handle left open would be closed at some later collection, and SQLite, finding itself the
 * last user of the old shared memory, would delete the WAL of whoever uses the file then.
 */
import { existsSync, readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintReplicationToken } from "../../src/domain/data-access/db-tokens.js";
import { createLogger } from "../../src/lib/logger.js";
import { loadOrCreateSigningKey } from "../../src/lib/signing-keys.js";
import { LocationWorker } from "../../src/replication/location-worker-client.js";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
let dir: string;
let worker: LocationWorker;

/** Files under `dir` this process holds open. */
function openFiles(): string[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(dir) ? [path.basename(target)] : [];
    } catch {
      return [];
    }
  });
}

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  dir = await mkdtemp(path.join(tmpdir(), "shoal-worker-"));
  const c = createClient({ url: db.urls.httpPath, authToken: db.token });
  await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  await c.execute("INSERT INTO t (v) VALUES ('one'), ('two')");
  worker = new LocationWorker("aws-eu-west-1", createLogger("silent"));
});
afterAll(async () => {
  await worker?.stop();
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

/** Opens a replica in the worker and reads it a few times, each read a prepared statement. */
async function openAndRead(name: string): Promise<{ key: string; file: string }> {
  const file = path.join(dir, `${name}.db`);
  const key = `${db.id}/${name}`;
  await worker.open(key, { path: file, syncUrl: `${h.url}/db/${db.org}/${db.name}`, token: db.token });
  for (let i = 0; i < 3; i++)
    expect((await worker.query(key, "SELECT count(*) FROM t", [])).rows).toEqual([[2n]]);
  expect(openFiles()).toContain(`${name}.db-wal`);
  return { key, file };
}

/**
 * The primary's data plane behind a proxy that counts every frame request and runs `before` ahead
 * of it: a delay (a primary on another machine under load), or a commit (a primary writing
 * faster than its replica pulls).
 */
async function proxiedPrimary(
  before: () => Promise<void>,
): Promise<{ url: string; pulls: () => number; close(): void }> {
  let pulls = 0;
  const target = new URL(h.url);
  const server = http.createServer((req, res) => {
    const pull = req.url?.includes("/sync/") ?? false;
    if (pull) pulls++;
    (pull ? before() : Promise.resolve()).then(() => {
      const out = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (from) => {
          res.writeHead(from.statusCode ?? 502, from.headers);
          from.pipe(res);
        },
      );
      req.pipe(out);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, pulls: () => pulls, close: () => server.close() };
}

const slowPrimary = (delayMs: number) =>
  proxiedPrimary(() => new Promise((resolve) => setTimeout(resolve, delayMs)));

describe("a location worker", () => {
  it("runs one more sync for all the calls made while one runs, so reads don't queue behind a pile of them", async () => {
    const primary = await slowPrimary(100);
    try {
      const file = path.join(dir, "busy.db");
      const key = `${db.id}/busy`;
      const syncUrl = `${primary.url}/db/${db.org}/${db.name}`;
      const c = createClient({ url: db.urls.httpPath, authToken: db.token });
      await c.execute("CREATE TABLE busy (v TEXT)");
      await worker.open(key, { path: file, syncUrl, token: db.token });
      const first = worker.sync(key);
      // Committed after the first sync began: the calls below must see it once they resolve.
      await c.execute("INSERT INTO busy (v) VALUES ('during')");
      const before = primary.pulls();
      const calls = Array.from({ length: 40 }, () => worker.sync(key));
      const read = worker.query(key, "SELECT count(*) FROM busy WHERE v = 'during'", []);
      await Promise.all([first, ...calls]);
      expect((await worker.query(key, "SELECT count(*) FROM busy WHERE v = 'during'", [])).rows).toEqual([
        [1n],
      ]);
      // Forty calls cost one sync after the running one (a few requests each), not forty.
      expect(primary.pulls() - before).toBeLessThan(10);
      expect((await read).rows.length).toBe(1);
      c.close();
      await worker.drop(key, file);
    } finally {
      primary.close();
    }
  });

  it("ends a sync at what the primary had when it began, however fast the primary commits", async () => {
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    await c.execute("CREATE TABLE steady (n INTEGER)");
    // Ahead of every pull, one more commit: each of the replica's requests finds a new frame, as
    // when a primary writes faster than its replica pulls. Capped, so a sync that follows every
    // commit still ends (and the test says how many pulls it took).
    let commits = 0;
    let committing = false;
    const primary = await proxiedPrimary(async () => {
      if (committing && commits < 200)
        await c.execute({ sql: "INSERT INTO steady (n) VALUES (?)", args: [++commits] });
    });
    const file = path.join(dir, "steady.db");
    const key = `${db.id}/steady`;
    try {
      const keys = path.join(h.dataDir, "keys");
      const dbTokenKey = await loadOrCreateSigningKey(keys, "db-tokens");
      const token = await mintReplicationToken(
        { dbTokenKey, clock: () => new Date() },
        db.id,
        "aws-eu-west-1",
      );
      const syncUrl = `${primary.url}/db/${db.org}/${db.name}`;
      await worker.open(key, { path: file, syncUrl, token });
      committing = true;
      const before = primary.pulls();
      const committedBefore = commits;
      await worker.sync(key);
      // Its first request fixes where it ends; one more is told "caught up". Without the horizon it
      // follows the commits until they stop: 200 pulls.
      expect(primary.pulls() - before).toBeLessThan(10);
      // Everything the primary had when the sync began is there, including the first pull's commit.
      const [[seen]] = (await worker.query(key, "SELECT count(*) FROM steady", [])).rows as [[bigint]];
      expect(Number(seen)).toBeGreaterThan(committedBefore);
      // The replica's next sync brings what came after.
      const atSecond = commits;
      await worker.sync(key);
      const [[later]] = (await worker.query(key, "SELECT count(*) FROM steady", [])).rows as [[bigint]];
      expect(Number(later)).toBeGreaterThan(atSecond);
    } finally {
      committing = false;
      // Dropped either way: the tests below count this process's open files.
      await worker.drop(key, file).catch(() => undefined);
      c.close();
      primary.close();
    }
  });

  it("holds nothing open on a released replica's files, which stay", async () => {
    const { key, file } = await openAndRead("released");
    await worker.release(key);
    expect(openFiles()).toEqual([]);
    expect(existsSync(file)).toBe(true);
  });

  it("holds nothing open on a dropped replica's files, which go", async () => {
    const { key, file } = await openAndRead("dropped");
    await worker.drop(key, file);
    expect(openFiles()).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });
});
