import { closeSync, existsSync, mkdirSync, openSync, readSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { startFrameLogAt } from "../engine/frame-log-start.js";
import { cutToSize, replayFrames } from "../engine/history.js";
import { finishDatabaseFile, removeDatabaseFile } from "../engine/snapshot.js";
import { FRAME_BYTES } from "../engine/wal.js";
import type { BackupBucket } from "./bucket.js";
import type { ChainStep, Snapshot } from "./catalog.js";
import { readCatalog } from "./frames-shipping.js";
import { CHECKSUM, decodeFrames } from "./objects.js";
import { unpackSnapshot } from "./snapshot-file.js";

export type BucketRestoreOutcome =
  | {
      kind: "restored";
      /** The point of the database's history the file holds. */
      generation: number;
      frame: number;
      /** When its last commit was made (null: the snapshot's state, before any replayed commit). */
      commitAt: number | null;
      /** The oldest moment the bucket can restore this database to. */
      earliest: number;
      /** Where the file's frame log starts (with `continueLog`), past every generation in the bucket. */
      next: { generation: number; index: number };
      /**
       * Frame `frame` of `generation` as shipped (header and page), when the restore replayed it:
       * a replica seeded from the bucket compares it with its primary's to know it has the same history.
       */
      lastFrame?: Buffer;
    }
  /** `at` is older than the oldest snapshot kept. */
  | { kind: "before-history"; earliest: number }
  | { kind: "future"; now: number }
  /** The bucket has no snapshot of that database. */
  | { kind: "missing" };

export interface RestoreOptions {
  /** A moment (ms): the state after the last commit made at or before it. Unset: the latest shipped. */
  at?: number;
  now?: number;
  /**
   * Start the file's frame log after the bucket's last generation (default true): the file becomes
   * a primary whose shipping goes on in the same folder of the bucket. False for a replica, which
   * keeps following its primary from the returned position.
   */
  continueLog?: boolean;
}

/**
 * Rebuilds one database from the bucket into `dest`, a file that must not exist: the newest
 * snapshot at or before the moment, then the frames shipped after it, replayed the way checkpoints
 * write them, up to the last commit at or before the moment. Every object is checked against its
 * SHA-256 and a plain result with SQLite's quick_check; on any failure `dest` is removed.
 */
export async function restoreDatabase(
  bucket: BackupBucket,
  dbId: string,
  dest: string,
  opts: RestoreOptions = {},
): Promise<BucketRestoreOutcome> {
  const now = opts.now ?? Date.now();
  if (opts.at !== undefined && opts.at > now) return { kind: "future", now };
  if (existsSync(dest)) throw new Error(`${dest} already exists`);
  const { catalog } = await readCatalog(bucket, dbId);
  const earliest = catalog.earliest();
  if (earliest === undefined) return { kind: "missing" };
  const snapshot = catalog.snapshotFor(opts.at);
  if (!snapshot) return { kind: "before-history", earliest };
  const { steps } = catalog.walk(snapshot);
  const gz = `${dest}.snapshot.gz`;
  mkdirSync(path.dirname(dest), { recursive: true });
  try {
    const metadata = await bucket.getFile(snapshot.key, gz);
    await unpackSnapshot(gz, dest, metadata[CHECKSUM]);
    await rm(gz, { force: true });
    const end = await replay(bucket, dest, snapshot, steps, opts.at);
    const startIndex = end.startIndex ?? Number(metadata["start-index"] ?? 0);
    // An encrypted database's pages are shipped as they are on disk and can't be opened without
    // its key, which Shoal never keeps: its objects' checksums are the check, and the file is
    // already in WAL mode as shipped. A plain one is checked by SQLite too.
    if (isPlainDatabaseFile(dest)) finishDatabaseFile(dest);
    const next = { generation: catalog.lastGeneration + 1, index: startIndex + end.frame };
    if (opts.continueLog ?? true) startFrameLogAt(dest, next);
    return {
      kind: "restored",
      generation: end.generation,
      frame: end.frame,
      commitAt: end.commitAt,
      earliest,
      next,
      ...(end.lastFrame ? { lastFrame: end.lastFrame } : {}),
    };
  } catch (e) {
    await rm(gz, { force: true });
    removeDatabaseFile(dest);
    await rm(`${dest}.log`, { recursive: true, force: true });
    throw e;
  }
}

interface ReplayEnd {
  generation: number;
  frame: number;
  commitAt: number | null;
  startIndex: number | undefined;
  lastFrame?: Buffer;
}

/** Replays the chain's frames onto the unpacked snapshot, up to the last commit at or before `at`. */
async function replay(
  bucket: BackupBucket,
  file: string,
  snapshot: Snapshot,
  steps: readonly ChainStep[],
  at: number | undefined,
): Promise<ReplayEnd> {
  const end: ReplayEnd = {
    generation: snapshot.generation,
    frame: snapshot.frame,
    commitAt: snapshot.frame > 0 ? snapshot.validFrom : null,
    startIndex: undefined,
  };
  const fd = openSync(file, "r+");
  try {
    let size: number | undefined;
    for (const step of steps) {
      if (step.generation !== end.generation)
        Object.assign(end, { generation: step.generation, frame: 0, lastFrame: undefined });
      const { body, metadata } = await bucket.get(step.key);
      const { header, frames } = await decodeFrames(body, metadata, step.key);
      const commits = header.commits.filter(([f, t]) => f > end.frame && (at === undefined || t <= at));
      const target = commits.at(-1);
      if (!target) break;
      const from = (end.frame + 1 - header.first) * FRAME_BYTES;
      const to = (target[0] - header.first + 1) * FRAME_BYTES;
      size = replayFrames(fd, frames.subarray(from, to)) ?? size;
      const lastFrame = Buffer.from(frames.subarray(to - FRAME_BYTES, to));
      Object.assign(end, { frame: target[0], commitAt: target[1], startIndex: header.startIndex, lastFrame });
      if (target[0] < header.last) break;
    }
    cutToSize(fd, size);
  } finally {
    closeSync(fd);
  }
  return end;
}

const SQLITE_MAGIC = Buffer.from("SQLite format 3\0", "latin1");

/** Whether `file` starts with SQLite's header (an encrypted database's first page is ciphertext). */
function isPlainDatabaseFile(file: string): boolean {
  const head = Buffer.alloc(SQLITE_MAGIC.length);
  const fd = openSync(file, "r");
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  return head.equals(SQLITE_MAGIC);
}
