import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ArchiveCopy, archiveFrames } from "../../src/engine/frame-archive.js";
import { readWalFrames, scanWal } from "../../src/engine/wal.js";

let dir: string;
let file: string;
let db: Database.Database;
const wal = () => `${file}-wal`;
const committed = () => scanWal(wal(), 0)?.committed ?? 0;
const insertRows = (n: number) => {
  const stmt = db.prepare("INSERT INTO t VALUES (?)");
  for (let i = 0; i < n; i++) stmt.run(`row ${i} ${"x".repeat(200)}`);
};
async function copied(copy: ArchiveCopy, generation: number, frames: number): Promise<void> {
  for (let i = 0; i < 500 && !copy.readyFor(generation, frames); i++)
    await new Promise((r) => setTimeout(r, 10));
  expect(copy.readyFor(generation, frames)).toBe(true);
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-archive-"));
  file = path.join(dir, "db.db");
  db = new Database(file);
  db.exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0");
  db.exec("CREATE TABLE t (v TEXT)");
  insertRows(600);
});
afterEach(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the background archive copy", () => {
  it("copies a generation's frames while writes go on, then adds the ones committed since", async () => {
    const first = committed();
    const copy = ArchiveCopy.start(wal(), dir, 1, first);
    insertRows(50);
    await copied(copy, 1, first);
    insertRows(50);
    const now = committed();
    expect(now).toBeGreaterThan(first);
    const archive = copy.finish(wal(), now);
    expect(readFileSync(archive).equals(readWalFrames(wal(), 1, now + 1))).toBe(true);
  });

  it("is never used for another generation, or for fewer frames than it copied", async () => {
    const frames = committed();
    const copy = ArchiveCopy.start(wal(), dir, 2, frames);
    await copied(copy, 2, frames);
    expect(copy.readyFor(3, frames)).toBe(false);
    expect(copy.readyFor(2, frames - 1)).toBe(false);
    const whole = path.join(dir, "3.frames.tmp");
    expect(archiveFrames(copy, wal(), 3, frames, whole)).toBe(whole);
    expect(existsSync(copy.file)).toBe(false);
    expect(readFileSync(whole).equals(readWalFrames(wal(), 1, frames + 1))).toBe(true);
  });

  it("removes its file when dropped mid-copy, leaving a later copy under the same generation intact", async () => {
    const frames = committed();
    const dropped = ArchiveCopy.start(wal(), dir, 1, frames);
    dropped.drop();
    expect(existsSync(dropped.file)).toBe(false);
    const next = ArchiveCopy.start(wal(), dir, 1, frames);
    expect(next.file).not.toBe(dropped.file);
    await copied(next, 1, frames);
    await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(dropped.file)).toBe(false);
    expect(readFileSync(next.file).equals(readWalFrames(wal(), 1, frames + 1))).toBe(true);
    expect(dropped.readyFor(1, frames)).toBe(false);
  });

  it("gives up when the WAL holds fewer frames than it was asked for", async () => {
    const copy = ArchiveCopy.start(wal(), dir, 1, committed() + 1000);
    await new Promise((r) => setTimeout(r, 300));
    expect(copy.readyFor(1, committed() + 1000)).toBe(false);
    expect(existsSync(copy.file)).toBe(false);
  });

  it("copies whole when no copy is ready, and sweeps copies a stopped process left", () => {
    const frames = committed();
    const whole = path.join(dir, "1.frames.tmp");
    archiveFrames(undefined, wal(), 1, frames, whole);
    expect(readFileSync(whole).equals(readWalFrames(wal(), 1, frames + 1))).toBe(true);
    writeFileSync(path.join(dir, "1.frames.7.copy"), "left over");
    ArchiveCopy.sweep(dir);
    expect(readdirSync(dir).filter((n) => n.endsWith(".copy"))).toEqual([]);
    expect(existsSync(whole)).toBe(true);
  });
});
