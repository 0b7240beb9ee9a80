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
import { createLogger } from "../../src/lib/logger.js";
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
 * The primary's data plane behind a proxy that holds every frame request for `delayMs` and
 * counts them: a pull that takes a while, as a primary on another machine under load answers.
 */
async function slowPrimary(delayMs: number): Promise<{ url: string; pulls: () => number; close(): void }> {
  let pulls = 0;
  const target = new URL(h.url);
  const server = http.createServer((req, res) => {
    const slow = req.url?.includes("/sync/") ?? false;
    if (slow) pulls++;
    setTimeout(
      () => {
        const out = http.request(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (from) => {
            res.writeHead(from.statusCode ?? 502, from.headers);
            from.pipe(res);
          },
        );
        req.pipe(out);
      },
      slow ? delayMs : 0,
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, pulls: () => pulls, close: () => server.close() };
}

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
