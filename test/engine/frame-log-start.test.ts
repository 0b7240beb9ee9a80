import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FrameLog } from "../../src/engine/frame-log.js";
import { startFrameLogAt } from "../../src/engine/frame-log-start.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-log-start-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a frame log started past generation 1", () => {
  it("numbers its generations and replication index on from where it was told", () => {
    const file = path.join(dir, "db.db");
    const db = new Database(file);
    db.exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0");
    startFrameLogAt(file, { generation: 7, index: 120 });
    const log = new FrameLog(file);
    expect(log.position()).toEqual({ generation: 7, frame: 0, index: 120 });
    db.exec("CREATE TABLE t (v TEXT)");
    log.afterCommit();
    const { generation, frame, index } = log.position();
    expect(generation).toBe(7);
    expect(index).toBe(120 + frame);
    expect(log.read(3, 1, 2)).toEqual({ kind: "gone", latest: 7 });
    expect(() => startFrameLogAt(file, { generation: 9, index: 0 })).toThrow(/already has a frame log/);
    db.close();
  });
});
