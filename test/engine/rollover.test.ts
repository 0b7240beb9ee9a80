import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EngineConnection } from "../../src/engine/connection.js";
import type { HostedDatabase } from "../../src/engine/hosted-database.js";
import { HostedDatabases } from "../../src/engine/hosted-databases.js";
import { InstanceFiles } from "../../src/engine/instance-files.js";
import { readWalFrames, scanWal, walSalts } from "../../src/engine/wal.js";

// The generation ends past 4,000 frames once their background copy is done, or past 16,000 regardless.
let dir: string;
let hosted: HostedDatabases;
let db: HostedDatabase;
let conn: EngineConnection;
const ID = "00000000-0000-4000-8000-000000000001";

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-rollover-"));
  const files = new InstanceFiles(dir);
  files.create("loc", ID);
  hosted = new HostedDatabases({ maxOpen: 4, synchronous: "NORMAL" }, files);
  db = hosted.of("loc", ID);
  conn = db.checkout();
  conn.configure({ queryOnly: false, maxPageCount: 0 });
  conn.exec("CREATE TABLE t (v BLOB)");
  db.afterWrite(conn);
});
afterEach(async () => {
  db.checkin(conn);
  await hosted.closeAll();
  await rm(dir, { recursive: true, force: true });
});

/** One transaction of 50 rows of a page each: about 50 frames. */
function commit(): void {
  conn.exec("BEGIN");
  for (let i = 0; i < 50; i++) conn.exec("INSERT INTO t VALUES (randomblob(3000))");
  conn.exec("COMMIT");
  db.afterWrite(conn);
}
const walFrames = () => scanWal(`${db.path}-wal`, 0)?.committed ?? 0;

describe("ending a generation", () => {
  it("waits for the background copy of its frames, then archives exactly what the WAL held", async () => {
    while (walFrames() <= 4000) commit();
    // The log counts them at the turn's end; the next commit starts the copy and leaves the generation be.
    await new Promise((r) => setImmediate(r));
    expect(db.frameLog.rolloverPrepared).toBe(false);
    commit();
    expect(db.frameLog.generation).toBe(1);
    for (let i = 0; i < 500 && !db.frameLog.rolloverPrepared; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(db.frameLog.rolloverPrepared).toBe(true);
    conn.exec("INSERT INTO t VALUES (randomblob(3000))");
    const frames = walFrames();
    const expected = readWalFrames(`${db.path}-wal`, 1, frames + 1);
    db.afterWrite(conn);
    expect(db.frameLog.generation).toBe(2);
    // A RESTART checkpoint: the frames stay in the WAL, all in the file now, and count for nothing.
    expect(walFrames()).toBe(frames);
    expect(db.frameLog.pending).toBe(0);
    const archived = db.frameLog.read(1, 1, frames + 1);
    expect(archived.kind).toBe("frames");
    expect((archived as { data: Buffer }).data.equals(expected)).toBe(true);
  });

  it("serves the next generation from the WAL started over by its first write", () => {
    const salts = () => walSalts(`${db.path}-wal`);
    while (db.frameLog.generation === 1) commit();
    const retired = salts();
    expect(db.frameLog.read(2, 1, 100)).toMatchObject({ kind: "past-end" });
    commit();
    expect(salts()).not.toEqual(retired);
    const frames = walFrames();
    expect(frames).toBeGreaterThan(0);
    expect(frames).toBeLessThan(100);
    expect(db.frameLog.pending).toBe(frames);
    const read = db.frameLog.read(2, 1, frames + 1) as { kind: string; data: Buffer };
    expect(read.kind).toBe("frames");
    expect(read.data.equals(readWalFrames(`${db.path}-wal`, 1, frames + 1))).toBe(true);
    expect(db.frameLog.position()).toMatchObject({ generation: 2, frame: frames });
  });

  it("ends it anyway, copying inline, when the WAL grows four times past the mark first", () => {
    // Never yielding to the event loop, the background copy can't report back: only the cap ends it.
    let ended = false;
    for (let i = 0; i < 400 && !ended; i++) {
      commit();
      ended = db.frameLog.generation > 1;
    }
    expect(ended).toBe(true);
    const archived = db.frameLog.read(1, 1, 1_000_000);
    expect(archived.kind).toBe("frames");
    expect((archived as { data: Buffer }).data.length / 4120).toBeGreaterThan(16_000);
  });
});
