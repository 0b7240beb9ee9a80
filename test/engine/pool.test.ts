import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HostedDatabases } from "../../src/engine/hosted-databases.js";
import { InstanceFiles } from "../../src/engine/instance-files.js";

let dir: string;
let files: InstanceFiles;
const ids = Array.from({ length: 40 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);
const openFds = () => readdirSync("/proc/self/fd").length;
const settle = () => new Promise((r) => setTimeout(r, 600));

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-pool-"));
  files = new InstanceFiles(dir);
  for (const id of ids) files.create("loc", id);
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("hosted databases and the connection pool", () => {
  it("tells its listeners when a checkpoint made behind its back ends a database's history", async () => {
    const pool = new HostedDatabases({ maxOpen: 2, synchronous: "NORMAL" }, files);
    const lost: Array<[string, number]> = [];
    pool.onLostHistory((file, generation) => lost.push([file, generation]));
    const p = files.path("loc", ids[0]!);
    const c = pool.at(p).checkout();
    c.exec("CREATE TABLE t (x)");
    pool.at(p).afterWrite(c);
    // Another program checkpoints the WAL away: the generation's frames are gone from it.
    const other = new Database(p);
    other.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    other.close();
    c.exec("INSERT INTO t VALUES (1)");
    pool.at(p).afterWrite(c);
    // Commits are recorded at the end of the turn (see FrameLog.noteCommit): that is when it shows.
    await new Promise((r) => setImmediate(r));
    expect(lost).toEqual([[p, 1]]);
    pool.at(p).checkin(c);
    await pool.closeAll();
  });

  it("opens connections lazily and keeps at most maxOpen idle ones, least recently used closing first", async () => {
    const pool = new HostedDatabases({ maxOpen: 4, synchronous: "NORMAL" }, files);
    expect(pool.stats().open).toBe(0);
    for (const id of ids) {
      const c = pool.at(files.path("loc", id)).checkout();
      c.execute(c.prepare("SELECT 1"), [], { wantRows: true });
      pool.at(c.path).checkin(c);
      expect(pool.stats().open).toBeLessThanOrEqual(4);
    }
    expect(pool.stats()).toMatchObject({ open: 4, idle: 4, inUse: 0, databases: 4 });
    // The most recent databases stayed open: checking one out again opens nothing new.
    const recent = pool.at(files.path("loc", ids[39]!)).checkout();
    expect(pool.stats().open).toBe(4);
    pool.at(recent.path).checkin(recent);
    await pool.closeAll();
  });

  it("never closes a connection in use, and shrinks back once they return", async () => {
    const pool = new HostedDatabases({ maxOpen: 3, synchronous: "NORMAL" }, files);
    const busy = ids.slice(0, 6).map((id) => pool.at(files.path("loc", id)).checkout());
    expect(pool.stats()).toMatchObject({ open: 6, inUse: 6 });
    for (const c of busy)
      expect(await c.execute(c.prepare("SELECT 1"), [], { wantRows: true })).toMatchObject({ rows: [[1n]] });
    for (const c of busy) pool.at(c.path).checkin(c);
    expect(pool.stats()).toMatchObject({ open: 3, inUse: 0 });
    await pool.closeAll();
  });

  it("rolls back a transaction left open on a returned connection", async () => {
    const pool = new HostedDatabases({ maxOpen: 2, synchronous: "NORMAL" }, files);
    const p = files.path("loc", ids[0]!);
    const c = pool.at(p).checkout();
    c.exec("CREATE TABLE t (x)");
    c.exec("BEGIN");
    c.exec("INSERT INTO t VALUES (1)");
    pool.at(c.path).checkin(c);
    const again = pool.at(p).checkout();
    expect(again.inTransaction).toBe(false);
    expect(
      await again.execute(again.prepare("SELECT count(*) FROM t"), [], { wantRows: true }),
    ).toMatchObject({ rows: [[0n]] });
    pool.at(again.path).checkin(again);
    await pool.closeAll();
  });

  it("releases the file descriptors of closed connections, even under heavy churn", async () => {
    const pool = new HostedDatabases({ maxOpen: 2, synchronous: "NORMAL" }, files);
    // The driver's thread pool, which statements that scan run on, opens its own descriptors once.
    const warm = pool.at(files.path("loc", ids[0]!)).checkout();
    await warm.execute(warm.prepare("SELECT count(*) FROM sqlite_master"), [], { wantRows: true });
    pool.at(warm.path).checkin(warm);
    await settle();
    const before = openFds();
    for (let round = 0; round < 20; round++) {
      for (const id of ids) {
        const c = pool.at(files.path("loc", id)).checkout();
        await c.execute(c.prepare("SELECT count(*) FROM sqlite_master"), [], { wantRows: true });
        pool.at(c.path).checkin(c);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await settle();
    // 800 opens and closes; only the 2 pooled connections (3 descriptors each) may remain open.
    expect(openFds() - before).toBeLessThanOrEqual(2 * 3 + 2);
    await pool.closeAll();
    await settle();
    expect(openFds() - before).toBeLessThanOrEqual(2);
  });

  it("retires a database: idle connections close now, busy ones when returned", async () => {
    const pool = new HostedDatabases({ maxOpen: 10, synchronous: "NORMAL" }, files);
    const p = files.path("loc", ids[0]!);
    const idle = pool.at(p).checkout();
    const busy = pool.at(p).checkout();
    pool.at(idle.path).checkin(idle);
    pool.at(p).retire();
    expect(idle.isClosed).toBe(true);
    expect(busy.isClosed).toBe(false);
    pool.at(busy.path).checkin(busy);
    expect(busy.isClosed).toBe(true);
    expect(pool.stats().open).toBe(0);
    await pool.closeAll();
  });

  it("keeps a connection opened after a retirement, while those opened before close when returned", async () => {
    const hosted = new HostedDatabases({ maxOpen: 10, synchronous: "NORMAL" }, files);
    const db = hosted.of("loc", ids[0]!);
    const before = db.checkout();
    db.retire();
    const after = db.checkout();
    db.checkin(after);
    db.checkin(before);
    expect(before.isClosed).toBe(true);
    expect(after.isClosed).toBe(false);
    expect(db.checkout()).toBe(after);
    await hosted.closeAll();
  });

  it("drains a database: waits for the connections in use, and says so when one stays", async () => {
    const hosted = new HostedDatabases({ maxOpen: 10, synchronous: "NORMAL" }, files);
    const db = hosted.of("loc", ids[0]!);
    const busy = db.checkout();
    setTimeout(() => db.checkin(busy), 50);
    expect(await db.drain(5000)).toBe(true);
    expect(busy.isClosed).toBe(true);
    const stuck = db.checkout();
    expect(await db.drain(30)).toBe(false);
    db.checkin(stuck);
    await hosted.closeAll();
  });

  it("removes an instance in one call: files gone, its log closed, a connection in use closed when returned", async () => {
    const hosted = new HostedDatabases({ maxOpen: 10, synchronous: "NORMAL" }, files);
    const db = hosted.of("loc", ids[1]!);
    const conn = db.checkout();
    conn.configure({ queryOnly: false, maxPageCount: 0 });
    await db.writeLock.acquire(conn, 1000);
    conn.exec("CREATE TABLE t (x)");
    db.afterWrite(conn);
    db.writeLock.release(conn);
    expect(db.frameLog.position().frame).toBeGreaterThan(0);
    hosted.remove("loc", ids[1]!);
    expect(files.exists("loc", ids[1]!)).toBe(false);
    expect(readdirSync(path.join(dir, "loc")).filter((f) => f.startsWith(ids[1]!))).toEqual([]);
    expect(hosted.find(files.path("loc", ids[1]!))).toBeUndefined();
    db.checkin(conn);
    expect(conn.isClosed).toBe(true);
    expect(hosted.stats()).toMatchObject({ open: 0, inUse: 0, databases: 0 });
    // The same path later is a new database with nothing of the old one.
    expect(hosted.of("loc", ids[1]!)).not.toBe(db);
    await hosted.closeAll();
  });

  it("records a turn's commits together at its end, telling commit listeners the position once", async () => {
    const hosted = new HostedDatabases({ maxOpen: 10, synchronous: "NORMAL" }, files);
    const seen: Array<{ path: string; frame: number }> = [];
    hosted.onCommit((e) => seen.push({ path: e.path, frame: e.frame }));
    const db = hosted.of("loc", ids[2]!);
    // Read through the log: its commit-time lines reach the file a little later (see CommitTimes).
    const lines = () => db.frameLog.commits(db.frameLog.generation);
    const conn = db.checkout();
    conn.configure({ queryOnly: false, maxPageCount: 0 });
    conn.exec("CREATE TABLE t (x)");
    db.afterWrite(conn);
    for (let i = 0; i < 3; i++) {
      conn.exec(`INSERT INTO t VALUES (${i})`);
      db.afterWrite(conn);
    }
    conn.exec("SELECT 1");
    db.afterWrite(conn);
    expect(seen).toEqual([]);
    await new Promise((r) => setImmediate(r));
    const first = db.frameLog.position().frame;
    expect(first).toBeGreaterThanOrEqual(4);
    expect(seen).toEqual([{ path: db.path, frame: first }]);
    expect(lines()).toHaveLength(1);
    // A reader doesn't wait for the turn's end: it sees the commit made just before it.
    conn.exec("INSERT INTO t VALUES (9)");
    db.afterWrite(conn);
    expect(db.frameLog.position().frame).toBeGreaterThan(first);
    expect(seen).toHaveLength(2);
    expect(lines()).toHaveLength(2);
    await new Promise((r) => setImmediate(r));
    expect(seen).toHaveLength(2);
    db.checkin(conn);
    await hosted.closeAll();
  });
});
