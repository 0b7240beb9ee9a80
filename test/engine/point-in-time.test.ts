import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FrameLog } from "../../src/engine/frame-log.js";
import { flushClosing } from "../../src/engine/handle-release.js";
import { readBase } from "../../src/engine/history.js";
import { restoreAsOf } from "../../src/engine/point-in-time.js";
import { readOnlyFile } from "../../src/lib/read-only-file.js";

let dir: string;
let file: string;
let db: Database.Database;
let log: FrameLog;
let restores = 0;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-pitr-"));
  file = path.join(dir, "db.db");
  db = new Database(file);
  db.exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0");
  log = new FrameLog(file);
  db.exec("CREATE TABLE t (v TEXT)");
  log.afterCommit(1000);
});
afterEach(async () => {
  db.close();
  await flushClosing();
  await rm(dir, { recursive: true, force: true });
});

const checkpoint = () => {
  const [busy] = db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").raw(true).get() as number[];
  return busy === 0;
};

function insert(value: string, at: number): void {
  db.prepare("INSERT INTO t VALUES (?)").run([value]);
  log.afterCommit(at);
}

/** Rows of the database rebuilt as of `at`, or the outcome when nothing was rebuilt. */
function rowsAsOf(at: number, now = 100_000) {
  const dest = path.join(dir, `restored-${++restores}.db`);
  const outcome = restoreAsOf(log, at, dest, { createdAt: 500, now });
  if (outcome.kind !== "restored") return outcome;
  const copy = new Database(readOnlyFile(dest));
  try {
    return (copy.prepare("SELECT v FROM t ORDER BY rowid").raw(true).all() as string[][]).map((r) => r[0]);
  } finally {
    copy.close();
  }
}

describe("point-in-time restore from the frame log", () => {
  it("rebuilds exactly the commits made at or before the moment, within the current generation", () => {
    insert("a", 2000);
    insert("b", 3000);
    insert("c", 4000);
    expect(rowsAsOf(1500)).toEqual([]);
    expect(rowsAsOf(2000)).toEqual(["a"]);
    expect(rowsAsOf(3999)).toEqual(["a", "b"]);
    expect(rowsAsOf(50_000)).toEqual(["a", "b", "c"]);
  });

  it("keeps the starting image at the first checkpoint and replays across generations", () => {
    insert("a", 2000);
    expect(log.rollover(checkpoint, 2500)).toBe(true);
    expect(readBase(log.folder)).toEqual({ generation: 1, startedAt: null });
    insert("b", 3000);
    db.exec("DELETE FROM t WHERE v = 'a'");
    log.afterCommit(3500);
    expect(log.rollover(checkpoint, 3600)).toBe(true);
    insert("c", 4000);
    expect(rowsAsOf(1000)).toEqual([]);
    expect(rowsAsOf(2000)).toEqual(["a"]);
    expect(rowsAsOf(3000)).toEqual(["a", "b"]);
    expect(rowsAsOf(3500)).toEqual(["b"]);
    expect(rowsAsOf(4000)).toEqual(["b", "c"]);
  });

  it("moves the starting image forward when old generations are pruned, and refuses what is gone", () => {
    insert("a", 2000);
    log.rollover(checkpoint, 2500);
    insert("b", 3000);
    log.rollover(checkpoint, 3500);
    insert("c", 4000);
    expect(log.prune(3000, 1)).toEqual([1]);
    expect(readBase(log.folder)).toEqual({ generation: 2, startedAt: 2500 });
    expect(rowsAsOf(2400)).toEqual({ kind: "before-history", earliest: 2500 });
    expect(rowsAsOf(2500)).toEqual(["a"]);
    expect(rowsAsOf(3000)).toEqual(["a", "b"]);
    expect(rowsAsOf(4000)).toEqual(["a", "b", "c"]);
  });

  it("refuses a moment in the future", () => {
    expect(rowsAsOf(200_000, 100_000)).toEqual({ kind: "future", now: 100_000 });
  });

  it("restores a database that shrank and grew again, page for page", () => {
    db.prepare("INSERT INTO t VALUES (?)").run(["x".repeat(200_000)]);
    log.afterCommit(2000);
    db.exec("DELETE FROM t");
    db.exec("VACUUM");
    log.afterCommit(3000);
    insert("small", 4000);
    const dest = path.join(dir, "shrunk.db");
    expect(restoreAsOf(log, 3500, dest, { createdAt: 500, now: 10_000 }).kind).toBe("restored");
    const copy = new Database(readOnlyFile(dest));
    expect(copy.prepare("SELECT count(*) AS n FROM t").get()).toMatchObject({ n: 0 });
    expect(copy.prepare("PRAGMA integrity_check").raw(true).get()).toEqual(["ok"]);
    copy.close();
    expect(rowsAsOf(2500)).toEqual(["x".repeat(200_000)]);
    expect(rowsAsOf(4000)).toEqual(["small"]);
  });

  it("starts history again after a generation is lost, from the file that follows it", () => {
    insert("a", 2000);
    checkpoint(); // behind the log's back: generation 1's frames are gone
    insert("b", 3000);
    expect(log.generation).toBe(2);
    expect(rowsAsOf(3000)).toEqual(["a", "b"]);
    const before = rowsAsOf(2000);
    expect(before).toMatchObject({ kind: "before-history" });
  });

  it("records the commit a reopened log finds in the WAL, so it can be restored to", () => {
    insert("a", 2000);
    db.exec("INSERT INTO t VALUES ('b')");
    log.closeFiles();
    log = new FrameLog(file);
    expect(log.afterCommit(3000)).toBeGreaterThan(0);
    expect(log.commits(1).map((c) => c.at)).toEqual([1000, 2000, 3000]);
    expect(rowsAsOf(2500)).toEqual(["a"]);
    expect(rowsAsOf(3000)).toEqual(["a", "b"]);
  });

  it("leaves no file behind when the moment is refused", () => {
    const dest = path.join(dir, "refused.db");
    restoreAsOf(log, 100, dest, { createdAt: 500, now: 10_000 });
    expect(existsSync(dest)).toBe(false);
  });
});
