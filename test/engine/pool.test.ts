import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InstanceFiles } from "../../src/engine/instance-files.js";
import { ConnectionPool } from "../../src/engine/pool.js";

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

describe("the connection pool", () => {
  it("opens connections lazily and keeps at most maxOpen idle ones, least recently used closing first", async () => {
    const pool = new ConnectionPool({ maxOpen: 4, synchronous: "NORMAL" });
    expect(pool.stats().open).toBe(0);
    for (const id of ids) {
      const c = pool.checkout(files.path("loc", id));
      c.execute(c.prepare("SELECT 1"), [], { wantRows: true });
      pool.checkin(c);
      expect(pool.stats().open).toBeLessThanOrEqual(4);
    }
    expect(pool.stats()).toMatchObject({ open: 4, idle: 4, inUse: 0, databases: 4 });
    // The most recent databases stayed open: checking one out again opens nothing new.
    const recent = pool.checkout(files.path("loc", ids[39]!));
    expect(pool.stats().open).toBe(4);
    pool.checkin(recent);
    await pool.closeAll();
  });

  it("never closes a connection in use, and shrinks back once they return", async () => {
    const pool = new ConnectionPool({ maxOpen: 3, synchronous: "NORMAL" });
    const busy = ids.slice(0, 6).map((id) => pool.checkout(files.path("loc", id)));
    expect(pool.stats()).toMatchObject({ open: 6, inUse: 6 });
    for (const c of busy)
      expect(await c.execute(c.prepare("SELECT 1"), [], { wantRows: true })).toMatchObject({ rows: [[1n]] });
    for (const c of busy) pool.checkin(c);
    expect(pool.stats()).toMatchObject({ open: 3, inUse: 0 });
    await pool.closeAll();
  });

  it("rolls back a transaction left open on a returned connection", async () => {
    const pool = new ConnectionPool({ maxOpen: 2, synchronous: "NORMAL" });
    const p = files.path("loc", ids[0]!);
    const c = pool.checkout(p);
    c.exec("CREATE TABLE t (x)");
    c.exec("BEGIN");
    c.exec("INSERT INTO t VALUES (1)");
    pool.checkin(c);
    const again = pool.checkout(p);
    expect(again.inTransaction).toBe(false);
    expect(
      await again.execute(again.prepare("SELECT count(*) FROM t"), [], { wantRows: true }),
    ).toMatchObject({ rows: [[0n]] });
    pool.checkin(again);
    await pool.closeAll();
  });

  it("releases the file descriptors of closed connections, even under heavy churn", async () => {
    const pool = new ConnectionPool({ maxOpen: 2, synchronous: "NORMAL" });
    // The driver's thread pool, which statements that scan run on, opens its own descriptors once.
    const warm = pool.checkout(files.path("loc", ids[0]!));
    await warm.execute(warm.prepare("SELECT count(*) FROM sqlite_master"), [], { wantRows: true });
    pool.checkin(warm);
    await settle();
    const before = openFds();
    for (let round = 0; round < 20; round++) {
      for (const id of ids) {
        const c = pool.checkout(files.path("loc", id));
        await c.execute(c.prepare("SELECT count(*) FROM sqlite_master"), [], { wantRows: true });
        pool.checkin(c);
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
    const pool = new ConnectionPool({ maxOpen: 10, synchronous: "NORMAL" });
    const p = files.path("loc", ids[0]!);
    const idle = pool.checkout(p);
    const busy = pool.checkout(p);
    pool.checkin(idle);
    pool.retire(p);
    expect(idle.isClosed).toBe(true);
    expect(busy.isClosed).toBe(false);
    pool.checkin(busy);
    expect(busy.isClosed).toBe(true);
    expect(pool.stats().open).toBe(0);
    await pool.closeAll();
  });
});
