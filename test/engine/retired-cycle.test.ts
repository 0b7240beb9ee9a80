import { randomBytes } from "node:crypto";
import { copyFileSync, cpSync, mkdirSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EngineConnection } from "../../src/engine/connection.js";
import { newEncryption } from "../../src/engine/encryption/keys.js";
import { flushClosing } from "../../src/engine/handle-release.js";
import type { HostedDatabase } from "../../src/engine/hosted-database.js";
import { HostedDatabases } from "../../src/engine/hosted-databases.js";
import { InstanceFiles } from "../../src/engine/instance-files.js";
import { WalRestartBusyError } from "../../src/engine/sqlite-errors.js";
import { readWalFrames, scanWal, walSalts } from "../../src/engine/wal.js";
import { readOnlyFile } from "../../src/lib/read-only-file.js";

// A generation ends with a RESTART checkpoint, which leaves its frames in the WAL until the next
// write starts the WAL over. A process that crashed in between leaves that WAL behind; the next
// process must not go on writing in the old cycle (see src/engine/retired-cycle.ts).
const ID = "00000000-0000-4000-8000-000000000001";
let dir: string;
let hosted: HostedDatabases;
let db: HostedDatabase;
let conn: EngineConnection;
let restarted: HostedDatabases | undefined;

function node(root: string): { hosted: HostedDatabases; db: HostedDatabase } {
  const files = new InstanceFiles(root);
  const h = new HostedDatabases({ maxOpen: 4, synchronous: "NORMAL" }, files);
  return { hosted: h, db: h.of("loc", ID) };
}

function commit(c: EngineConnection, on: HostedDatabase, rows = 50): void {
  c.exec("BEGIN");
  for (let i = 0; i < rows; i++) c.exec("INSERT INTO t VALUES (randomblob(3000))");
  c.exec("COMMIT");
  on.afterWrite(c);
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-retired-"));
  new InstanceFiles(path.join(dir, "a")).create("loc", ID);
  ({ hosted, db } = node(path.join(dir, "a")));
  conn = db.checkout();
  conn.configure({ queryOnly: false, maxPageCount: 0 });
  conn.exec("CREATE TABLE t (v BLOB)");
  db.afterWrite(conn);
  // Never yielding, only the cap ends generation 1 (its frames copied inline).
  while (db.frameLog.generation === 1) commit(conn, db);
});
afterEach(async () => {
  db.checkin(conn);
  await hosted.closeAll();
  await restarted?.closeAll();
  restarted = undefined;
  await flushClosing();
  await rm(dir, { recursive: true, force: true });
});

/** The files as a process killed now leaves them (no shared-memory index), under `b/`. */
function crashCopy(): string {
  const from = db.path;
  const root = path.join(dir, "b");
  new InstanceFiles(root).create("loc", ID);
  const to = new InstanceFiles(root).path("loc", ID);
  copyFileSync(from, to);
  copyFileSync(`${from}-wal`, `${to}-wal`);
  cpSync(`${from}.log`, `${to}.log`, { recursive: true });
  return root;
}

/** A new node on `root` (the process started again), and the generations it reports lost. */
function restart(root: string) {
  const b = node(root);
  restarted = b.hosted;
  const lost: number[] = [];
  b.hosted.onLostHistory((_, g) => lost.push(g));
  return { ...b, lost };
}

const rowsOf = (file: string) => {
  const d = new Database(readOnlyFile(file));
  try {
    return (d.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n;
  } finally {
    d.close();
  }
};

describe("a WAL left holding a finished generation's cycle", () => {
  it("is emptied by the next process's first connection, and the next generation is served whole", () => {
    const rows = rowsOf(db.path);
    const root = crashCopy();
    const b = restart(root);
    const wal = `${b.db.path}-wal`;
    expect(statSync(wal).size).toBeGreaterThan(0);
    const c = b.db.checkout();
    expect(statSync(wal).size).toBe(0);
    expect(b.db.frameLog.position()).toMatchObject({ generation: 2, frame: 0 });
    c.configure({ queryOnly: false, maxPageCount: 0 });
    commit(c, b.db, 3);
    const frames = scanWal(wal)!.committed;
    const read = b.db.frameLog.read(2, 1, frames + 1) as { kind: string; data: Buffer };
    expect(read.kind).toBe("frames");
    expect(read.data.equals(readWalFrames(wal, 1, frames + 1))).toBe(true);
    expect(b.db.frameLog.read(1, 1, 2).kind).toBe("frames");
    b.db.checkin(c);
    expect(rowsOf(b.db.path)).toBe(rows + 3);
  });

  it("without that, writes go on in the old cycle: the log then ends the generation as lost", () => {
    const root = crashCopy();
    const file = new InstanceFiles(root).path("loc", ID);
    const retired = walSalts(`${file}-wal`);
    const before = scanWal(`${file}-wal`)!.committed;
    // Another program writes first (and is still running: its close would checkpoint): SQLite
    // rebuilt its index and appends after the old frames.
    const other = new Database(file);
    other.exec("INSERT INTO t VALUES (randomblob(3000))");
    expect(walSalts(`${file}-wal`)).toEqual(retired);
    expect(scanWal(`${file}-wal`)!.committed).toBeGreaterThan(before);
    const b = restart(root);
    const c = b.db.checkout();
    expect(b.lost).toEqual([2]);
    expect(statSync(`${file}-wal`).size).toBe(0);
    expect(b.db.frameLog.position()).toMatchObject({ generation: 3, frame: 0 });
    b.db.checkin(c);
    other.close();
  });

  it("refuses the first connection with SQLITE_BUSY while another process reads the old frames", () => {
    const root = crashCopy();
    const file = new InstanceFiles(root).path("loc", ID);
    const reader = new Database(file);
    reader.exec("BEGIN");
    reader.prepare("SELECT count(*) FROM t").get();
    const b = restart(root);
    let refused: unknown;
    try {
      b.db.checkout();
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(WalRestartBusyError);
    expect(refused).toMatchObject({ code: "SQLITE_BUSY" });
    expect(b.hosted.stats().open).toBe(0);
    reader.exec("COMMIT");
    const c = b.db.checkout();
    expect(statSync(`${file}-wal`).size).toBe(0);
    b.db.checkin(c);
    reader.close();
  });

  it("empties an encrypted database's WAL through a connection opened with its key", () => {
    const key = newEncryption({ cipher: "aes256cbc", key: randomBytes(32) }).key;
    const ENC = "00000000-0000-4000-8000-000000000002";
    new InstanceFiles(path.join(dir, "a")).create("loc", ENC, key);
    const e = hosted.of("loc", ENC);
    const c = e.checkout(key);
    c.configure({ queryOnly: false, maxPageCount: 0 });
    c.exec("CREATE TABLE t (v BLOB)");
    commit(c, e, 5);
    expect(hosted.rollover(e, c)).toBe(true);
    const root = path.join(dir, "c");
    const to = new InstanceFiles(root).path("loc", ENC);
    mkdirSync(path.dirname(to), { recursive: true });
    copyFileSync(e.path, to);
    copyFileSync(`${e.path}-wal`, `${to}-wal`);
    cpSync(`${e.path}.log`, `${to}.log`, { recursive: true });
    e.checkin(c);
    const b = restart(root);
    const copy = b.hosted.of("loc", ENC);
    expect(statSync(`${to}-wal`).size).toBeGreaterThan(0);
    const ok = copy.checkout(key);
    expect(statSync(`${to}-wal`).size).toBe(0);
    expect(copy.frameLog.position()).toMatchObject({ generation: 2, frame: 0 });
    expect([...ok.rows("SELECT count(*) FROM t")]).toEqual([[5n]]);
    copy.checkin(ok);
  });

  it("ends a generation as lost when the process ended inside its checkpoint, and finishes that checkpoint", () => {
    commit(conn, db);
    const { frame } = db.frameLog.position();
    const rows = rowsOf(db.path);
    // Killed after the checkpoint wrote the file, before the log recorded the generation's end.
    expect(() =>
      db.frameLog.rollover(() => {
        conn.checkpoint("RESTART");
        throw new Error("killed");
      }),
    ).toThrow("killed");
    const root = crashCopy();
    const b = restart(root);
    const c = b.db.checkout();
    expect(b.lost).toEqual([2]);
    expect(statSync(`${b.db.path}-wal`).size).toBe(0);
    expect(b.db.frameLog.position()).toMatchObject({ generation: 3, frame: 0 });
    expect(b.db.frameLog.read(2, 1, 2).kind).toBe("gone");
    expect(frame).toBeGreaterThan(0);
    b.db.checkin(c);
    expect(rowsOf(b.db.path)).toBe(rows);
  });

  it("keeps the generation going when its checkpoint couldn't complete", () => {
    commit(conn, db);
    const before = db.frameLog.position();
    expect(db.frameLog.rollover(() => false)).toBe(false);
    const b = restart(crashCopy());
    expect(b.db.frameLog.position()).toEqual(before);
  });
});
