/**
 * The checks a replica seeded from the backup bucket goes through before it follows its primary:
 * the seed's last frame against the primary's real frame log, and the position files the
 * followers read (libSQL's `-info`, the keyless follower's `.follow`).
 */
import { mkdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FrameLog } from "../../src/engine/frame-log.js";
import { crc32 } from "../../src/engine/replica-info.js";
import { FRAME_BYTES } from "../../src/engine/wal.js";
import { type FrameSource, localFrameSource } from "../../src/replication/frame-source.js";
import { checkSeed, writeSeedPosition } from "../../src/replication/seeding.js";

let dir: string;
let primary: Database.Database;
let log: FrameLog;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-seeding-"));
  const file = path.join(dir, "primary", "db.db");
  mkdirSync(path.dirname(file));
  primary = new Database(file);
  primary.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0");
  primary.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  log = new FrameLog(file);
  log.afterCommit();
  for (let i = 0; i < 3; i++) {
    primary.prepare("INSERT INTO t (v) VALUES (?)").run(`row ${i}`);
    log.afterCommit();
  }
});
afterEach(async () => {
  primary.close();
  await rm(dir, { recursive: true, force: true });
});

/** Frame `n` of the current generation as the primary serves it. */
function frame(n: number): Buffer {
  const read = log.read(log.generation, n, n + 1);
  if (read.kind !== "frames") throw new Error(`no frame ${n}`);
  return Buffer.from(read.data);
}

describe("checking a seed against its primary", () => {
  it("accepts the primary's own frame at the seed's point, and nothing else", async () => {
    const source = localFrameSource(log);
    const { generation, frame: last } = log.position();
    expect(last).toBeGreaterThan(1);
    expect(await checkSeed(source, { generation, frame: last, lastFrame: frame(last) })).toBe("same");
    // An earlier commit of the same history is a fine place to start from too.
    expect(await checkSeed(source, { generation, frame: last - 1, lastFrame: frame(last - 1) })).toBe("same");
    // Another history: same position, other bytes (one bit of the page is enough).
    const other = frame(last);
    other[FRAME_BYTES - 1] = (other[FRAME_BYTES - 1] ?? 0) ^ 1;
    expect(await checkSeed(source, { generation, frame: last, lastFrame: other })).toBe("differs");
    // A seed ahead of the primary (the primary's log was lost and started again).
    expect(await checkSeed(source, { generation, frame: last + 5, lastFrame: frame(last) })).toBe("differs");
    expect(await checkSeed(source, { generation: generation + 1, frame: 0 })).toBe("differs");
    expect(await checkSeed(source, { generation, frame: 0 })).toBe("same");
  });

  it("can't tell while the primary can't be asked", async () => {
    const unreachable: FrameSource = {
      currentGeneration: () => Promise.reject(new Error("connection refused")),
      exportInto: () => Promise.reject(new Error("connection refused")),
      frames: () => Promise.reject(new Error("connection refused")),
    };
    expect(await checkSeed(unreachable, { generation: 1, frame: 3, lastFrame: frame(3) })).toBe("unknown");
    expect(await checkSeed(unreachable, { generation: 1, frame: 0 })).toBe("unknown");
  });
});

describe("where a seeded replica stands", () => {
  it("writes libSQL's sync metadata with its CRC-32, and the keyless follower's position", () => {
    const file = path.join(dir, "replica.db");
    writeSeedPosition(file, { generation: 4, frame: 1290 }, false);
    const info = JSON.parse(readFileSync(`${file}-info`, "utf8"));
    expect(info).toMatchObject({ version: 0, durable_frame_num: 1290, generation: 4 });
    const fields = Buffer.alloc(12);
    fields.writeUInt32LE(0, 0);
    fields.writeUInt32LE(1290, 4);
    fields.writeUInt32LE(4, 8);
    expect(info.hash).toBe(crc32(fields));
    writeSeedPosition(file, { generation: 4, frame: 1290 }, true);
    expect(JSON.parse(readFileSync(`${file}.follow`, "utf8"))).toEqual({ generation: 4, frame: 1290 });
  });

  it("computes CRC-32 as zlib and crc32fast do", () => {
    expect(crc32(Buffer.from("123456789"))).toBe(0xcbf43926);
    expect(crc32(Buffer.alloc(0))).toBe(0);
  });
});
