/**
 * A location's worker lets go of a replica's files when told to, at once: a replica released for a
 * promotion (its file becomes a primary another process serves) or dropped must hold no
 * descriptor on its file, WAL or shared memory, even after reads prepared statements on it. A
 * handle left open would be closed at some later collection, and SQLite, finding itself the
 * last user of the old shared memory, would delete the WAL of whoever uses the file then.
 */
import { existsSync, readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
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

describe("a location worker", () => {
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
