import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EncryptionKeyError } from "../../src/engine/encryption/errors.js";
import { type DatabaseKey, newEncryption } from "../../src/engine/encryption/keys.js";
import { keyOptions, openReplicaReader } from "../../src/engine/encryption/open.js";
import { FrameLog } from "../../src/engine/frame-log.js";
import { type FrameSource, localFrameSource } from "../../src/replication/frame-source.js";
import { KeylessFollower } from "../../src/replication/keyless-follower.js";
import { filesHoldingText, filesUnderHoldingText } from "../helpers/plaintext.js";

const MARKER = `row-${randomBytes(8).toString("hex")}`;

let dir: string;
let primaryPath: string;
let replicaPath: string;
let key: DatabaseKey;
let primary: Database.Database;
let log: FrameLog;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-follow-"));
  primaryPath = path.join(dir, "primary", "db.db");
  replicaPath = path.join(dir, "replica", "nested", "db.db");
  mkdirSync(path.dirname(primaryPath)); // the follower makes the replica's own folder
  key = newEncryption({ cipher: "aes256cbc", key: randomBytes(32) }).key;
  // The primary as the pool keeps it: WAL, checkpoints only by the frame log.
  primary = new Database(primaryPath, keyOptions(key));
  primary.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0");
  primary.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  log = new FrameLog(primaryPath);
  log.afterCommit();
});
afterEach(async () => {
  primary.close();
  await rm(dir, { recursive: true, force: true });
});

/** Writes `n` rows in one transaction, as a stream would, and lets the frame log see the commit. */
function write(n: number, size = 40): void {
  const ins = primary.prepare("INSERT INTO t (v) VALUES (?)");
  primary.exec("BEGIN");
  for (let i = 0; i < n; i++) ins.run(`${MARKER}-${i}-${"y".repeat(size)}`);
  primary.exec("COMMIT");
  log.afterCommit();
}

/** Ends the generation as the pool does: archive its frames, checkpoint, start the next one. */
function rollover(): void {
  const ok = log.rollover(() => {
    const [busy] = primary.prepare("PRAGMA wal_checkpoint(TRUNCATE)").raw(true).get() as number[];
    return busy === 0;
  });
  expect(ok).toBe(true);
}

const primaryRows = () => primary.prepare("SELECT id, v FROM t ORDER BY id").raw(true).all();

/** Reads at the replica location: a reader opened with the key a request brings, closed before applies. */
class Readers {
  private db: Database.Database | undefined;
  close = () => {
    this.db?.close();
    this.db = undefined;
  };
  rows(k: DatabaseKey | undefined = key): unknown[] {
    this.db ??= openReplicaReader(replicaPath, k);
    return this.db.prepare("SELECT id, v FROM t ORDER BY id").raw(true).all();
  }
}

describe("a keyless follower of an encrypted primary", () => {
  it("follows across WAL cycles without the key: the replica opens with the key to the primary's rows, and holds no plaintext", async () => {
    const readers = new Readers();
    const follower = new KeylessFollower({
      path: replicaPath,
      source: localFrameSource(log),
      beforeApply: readers.close,
    });
    expect((await follower.sync()).bootstrapped).toBe(true);
    expect(readers.rows()).toEqual([]);
    for (let round = 0; round < 6; round++) {
      write(30 + round * 20, 200);
      const r = await follower.sync();
      expect(r.frames).toBeGreaterThan(0);
      expect(readers.rows()).toEqual(primaryRows());
      if (round % 2 === 1) rollover();
    }
    expect(log.generation).toBe(4);
    // After the last rollover the replica catches up to the new generation and equals the primary
    // file byte for byte: both are the same encrypted pages.
    const last = await follower.sync();
    expect(last.position).toEqual({ generation: 4, frame: 0 });
    readers.close();
    expect(readFileSync(replicaPath).equals(readFileSync(primaryPath))).toBe(true);

    const r = openReplicaReader(replicaPath, key);
    expect(r.prepare("PRAGMA integrity_check").raw(true).get()).toEqual(["ok"]);
    r.close();
    expect(filesUnderHoldingText(path.dirname(replicaPath), MARKER)).toEqual([]);
    expect(filesUnderHoldingText(path.dirname(primaryPath), MARKER)).toEqual([]);
    // Without the key, or with another, nothing is readable.
    const wrong = newEncryption({ cipher: "aes256cbc", key: randomBytes(32) }).key;
    expect(() => openReplicaReader(replicaPath, undefined)).toThrow(EncryptionKeyError);
    expect(() => openReplicaReader(replicaPath, wrong)).toThrow(/doesn't open/);
  });

  it("carries a transaction larger than a batch through a pending file on disk", async () => {
    const follower = new KeylessFollower({
      path: replicaPath,
      source: localFrameSource(log),
      batchFrames: 8,
    });
    await follower.sync();
    write(400, 500); // ~60 pages in one commit
    write(3);
    const seen: string[] = [];
    const source = localFrameSource(log);
    const spying: FrameSource = {
      ...source,
      frames: async (g, s, e) => {
        if (existsSync(`${replicaPath}.pending`)) seen.push("pending");
        expect(filesHoldingText(`${replicaPath}.pending`, MARKER)).toEqual([]);
        return source.frames(g, s, e);
      },
    };
    const viaBatches = new KeylessFollower({ path: replicaPath, source: spying, batchFrames: 8 });
    const r = await viaBatches.sync();
    expect(seen.length).toBeGreaterThan(2);
    expect(r.position.frame).toBe(log.position().frame);
    expect(existsSync(`${replicaPath}.pending`)).toBe(false);
    const readers = new Readers();
    expect(readers.rows()).toEqual(primaryRows());
    readers.close();
  });

  it("resumes from its saved position after a restart, and rewrites a run whose position was lost in a crash", async () => {
    const first = new KeylessFollower({ path: replicaPath, source: localFrameSource(log) });
    await first.sync();
    write(50);
    await first.sync();
    const saved = readFileSync(`${replicaPath}.follow`);
    write(50);
    rollover();
    write(50);
    await first.sync();
    // A crash after the pages were written but before the position was saved: the old position.
    copyFileSync(`${replicaPath}.follow`, `${replicaPath}.follow.now`);
    writeFileSync(`${replicaPath}.follow`, saved);
    const again = new KeylessFollower({ path: replicaPath, source: localFrameSource(log) });
    expect(again.position).toEqual(JSON.parse(String(saved)));
    const r = await again.sync();
    expect(r.bootstrapped).toBe(false);
    expect(r.frames).toBeGreaterThan(0);
    expect(r.position).toEqual(JSON.parse(readFileSync(`${replicaPath}.follow.now`, "utf8")));
    const readers = new Readers();
    expect(readers.rows()).toEqual(primaryRows());
    readers.close();
    // Restarted with nothing new: nothing to do.
    const idle = await new KeylessFollower({ path: replicaPath, source: localFrameSource(log) }).sync();
    expect(idle).toMatchObject({ frames: 0, bootstrapped: false });
  });

  it("starts over from a fresh copy when the frames it needs were pruned", async () => {
    const follower = new KeylessFollower({ path: replicaPath, source: localFrameSource(log) });
    await follower.sync();
    write(20);
    rollover();
    write(20);
    rollover();
    write(20);
    log.prune(Date.now() + 1000, 0);
    const r = await follower.sync();
    expect(r.bootstrapped).toBe(true);
    expect(r.position.generation).toBe(3);
    const readers = new Readers();
    expect(readers.rows()).toEqual(primaryRows());
    readers.close();
  });

  it("folds syncs asked for while one runs into one more run that covers each caller's commits", async () => {
    const follower = new KeylessFollower({ path: replicaPath, source: localFrameSource(log) });
    await follower.sync();
    write(10);
    const a = follower.sync();
    write(10);
    const b = follower.sync();
    write(10);
    const c = follower.sync();
    expect(c).toBe(b);
    expect(b).not.toBe(a);
    await a;
    expect((await b).position.frame).toBe(log.position().frame);
    await follower.drop();
    expect(existsSync(replicaPath) || existsSync(`${replicaPath}.follow`)).toBe(false);
  });
});
