import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FrameLog } from "../../src/engine/frame-log.js";
import { FRAME_BYTES } from "../../src/engine/wal.js";

let dir: string;
let file: string;
let db: Database.Database;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-log-"));
  file = path.join(dir, "db.db");
  db = new Database(file);
  db.exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0");
  db.exec("CREATE TABLE t (v TEXT)");
});
afterEach(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

const checkpoint = () => {
  const [busy] = db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").raw(true).get() as number[];
  return busy === 0;
};
const commitFlag = (frames: Buffer, i: number) => frames.readUInt32BE(i * FRAME_BYTES + 4);

describe("the frame log", () => {
  it("counts committed frames and serves them, ending each transaction with a commit frame", () => {
    const log = new FrameLog(file);
    const first = log.pending;
    expect(first).toBeGreaterThan(0); // CREATE TABLE
    db.exec("INSERT INTO t VALUES ('a')");
    expect(log.afterCommit()).toBeGreaterThan(0);
    const { frame, generation, index } = log.position();
    expect(generation).toBe(1);
    expect(index).toBe(frame);
    const read = log.read(1, 1, frame + 1);
    expect(read.kind).toBe("frames");
    const frames = (read as { data: Buffer }).data;
    expect(frames.length).toBe(frame * FRAME_BYTES);
    expect(commitFlag(frames, frame - 1)).not.toBe(0);
    expect(log.read(1, frame + 1, frame + 10)).toEqual({ kind: "past-end", latest: 1 });
  });

  it("ignores the frames of a rolled-back transaction", () => {
    const log = new FrameLog(file);
    const before = log.pending;
    db.exec("BEGIN");
    for (let i = 0; i < 200; i++) db.prepare("INSERT INTO t VALUES (?)").run([`x${"y".repeat(1000)}${i}`]);
    db.exec("ROLLBACK");
    log.afterCommit();
    expect(log.pending).toBe(before);
    db.exec("INSERT INTO t VALUES ('kept')");
    log.afterCommit();
    expect(log.pending).toBeGreaterThan(before);
  });

  it("archives a generation at rollover and serves it to replicas that are midway", () => {
    const log = new FrameLog(file);
    db.exec("INSERT INTO t VALUES ('g1')");
    log.afterCommit();
    const g1 = log.position();
    expect(log.rollover(checkpoint)).toBe(true);
    expect(log.position()).toEqual({ generation: 2, frame: 0, index: g1.index });
    const archived = log.read(1, 1, 1000);
    expect(archived.kind).toBe("frames");
    expect((archived as { data: Buffer }).data.length).toBe(g1.frame * FRAME_BYTES);
    // Past the end of an old generation: move on to the latest.
    expect(log.read(1, g1.frame + 1, 1000)).toEqual({ kind: "past-end", latest: 2 });
    db.exec("INSERT INTO t VALUES ('g2')");
    log.afterCommit();
    expect(log.position().generation).toBe(2);
    expect(log.position().index).toBeGreaterThan(g1.index);
    expect(log.read(2, 1, 100).kind).toBe("frames");
  });

  it("keeps its state across a reopen", () => {
    const log = new FrameLog(file);
    db.exec("INSERT INTO t VALUES ('a')");
    log.afterCommit();
    log.rollover(checkpoint);
    db.exec("INSERT INTO t VALUES ('b')");
    log.afterCommit();
    const reopened = new FrameLog(file);
    expect(reopened.position()).toEqual(log.position());
    expect(reopened.read(1, 1, 10).kind).toBe("frames");
  });

  it("starts a new generation and marks the old one lost when something else checkpoints, and says so", () => {
    const lost: number[] = [];
    const log = new FrameLog(file, (g) => lost.push(g));
    db.exec("INSERT INTO t VALUES ('a')");
    log.afterCommit();
    checkpoint(); // not through the log: its frames are gone from the WAL
    db.exec("INSERT INTO t VALUES ('b')");
    log.afterCommit();
    expect(log.generation).toBe(2);
    expect(log.read(1, 1, 10).kind).toBe("gone");
    expect(lost).toEqual([1]);
  });

  it("refuses to roll over when the checkpoint can't complete, changing nothing", () => {
    const log = new FrameLog(file);
    db.exec("INSERT INTO t VALUES ('a')");
    log.afterCommit();
    const before = log.position();
    expect(log.rollover(() => false)).toBe(false);
    expect(log.position()).toEqual(before);
    expect(log.read(1, 1, 100).kind).toBe("frames");
  });

  it("records commit times and prunes old generations", () => {
    const log = new FrameLog(file);
    db.exec("INSERT INTO t VALUES ('a')");
    log.afterCommit(1000);
    db.exec("INSERT INTO t VALUES ('b')");
    log.afterCommit(2000);
    expect(log.commits(1).map((c) => c.at)).toEqual([1000, 2000]);
    log.rollover(checkpoint, 3000);
    db.exec("INSERT INTO t VALUES ('c')");
    log.afterCommit(4000);
    log.rollover(checkpoint, 5000);
    expect(log.commits(1).map((c) => c.at)).toEqual([1000, 2000]);
    expect(log.prune(4000, 1)).toEqual([1]);
    expect(log.read(1, 1, 10).kind).toBe("gone");
    expect(log.read(2, 1, 10).kind).toBe("frames");
  });

  it("records noted commits as one line at the newest one's time, before anything reads the log", () => {
    let told = 0;
    const log = new FrameLog(file, undefined, () => told++);
    log.afterCommit(500); // CREATE TABLE
    db.exec("INSERT INTO t VALUES ('a')");
    log.noteCommit(1000);
    db.exec("INSERT INTO t VALUES ('b')");
    log.noteCommit(2000);
    expect(told).toBe(0);
    // Any reader records them first: here the commit times a point-in-time restore reads.
    const all = log.commits(1);
    expect(all.map((c) => c.at)).toEqual([500, 2000]);
    expect(all.at(-1)!.frames).toBe(log.position().frame);
    expect(told).toBe(1);
    // Nothing noted since: settling again records nothing and tells nobody.
    expect(log.settle()).toBe(0);
    expect(told).toBe(1);
    // A rollover records what was noted before archiving the generation's commit times with it.
    db.exec("INSERT INTO t VALUES ('c')");
    log.noteCommit(3000);
    expect(log.rollover(checkpoint, 3500)).toBe(true);
    expect(log.commits(1).map((c) => c.at)).toEqual([500, 2000, 3000]);
    expect(told).toBe(2);
  });
});
