import { createHash } from "node:crypto";
import { closeSync, createReadStream, createWriteStream, openSync } from "node:fs";
import { copyFile, rm, stat } from "node:fs/promises";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { cutToSize, replayFrames } from "../engine/history.js";
import { DamagedObjectError } from "./objects.js";
import type { BackupLog } from "./source.js";

/** A snapshot written to a local gzip file, ready to upload. */
export interface BuiltSnapshot {
  generation: number;
  frame: number;
  /** The earliest moment its state is known to have been the current one (ms). */
  validFrom: number;
  startIndex: number;
  /** SHA-256 of the database file (before compression). */
  sha256: string;
  gzFile: string;
}

const BATCH = 1024;

/**
 * The database as of its last commit, built without stopping writers: the file (the current
 * generation's start, as only the frame log checkpoints) is copied, then the generation's frames
 * are written over the copy the way a checkpoint would. The frame count is read after the copy:
 * a checkpoint that gave up halfway (a reader in the way) may have moved some frames into the file
 * during the copy, and replaying every committed frame over them puts each page back at its last
 * committed version whichever copy was read. A checkpoint that completed (the generation changed)
 * makes the copy useless: undefined, to try again later.
 */
export async function buildSnapshot(
  log: BackupLog,
  work: string,
  now: number,
): Promise<BuiltSnapshot | undefined> {
  const generation = log.position().generation;
  const raw = `${work}.db`;
  const gzFile = `${work}.db.gz`;
  try {
    await copyFile(log.dbPath, raw);
    const h = log.history();
    if (h.current.generation !== generation) return undefined;
    const frame = h.current.frames;
    await overlay(log, raw, generation, frame);
    const sha = createHash("sha256");
    const tap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        sha.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(createReadStream(raw), tap, createGzip({ level: 6 }), createWriteStream(gzFile));
    return {
      generation,
      frame,
      validFrom: validFrom(log, generation, frame, now),
      startIndex: h.current.startIndex,
      sha256: sha.digest("hex"),
      gzFile,
    };
  } catch (e) {
    await rm(gzFile, { force: true });
    throw e;
  } finally {
    await rm(raw, { force: true });
  }
}

/** Replays frames 1..`frames` of a generation onto a copy of its starting file. */
async function overlay(log: BackupLog, file: string, generation: number, frames: number): Promise<void> {
  if (frames === 0) return;
  const fd = openSync(file, "r+");
  try {
    let size: number | undefined;
    for (let start = 1; start <= frames; start += BATCH) {
      const read = log.read(generation, start, Math.min(start + BATCH, frames + 1));
      if (read.kind !== "frames") throw new Error(`frames of generation ${generation} went away`);
      size = replayFrames(fd, read.data) ?? size;
      // Between batches, let requests run: a large generation is read in several turns.
      await new Promise((resolve) => setImmediate(resolve));
    }
    cutToSize(fd, size);
  } finally {
    closeSync(fd);
  }
}

/**
 * When the state after frame `frame` is known to have been current: its commit's time; for a
 * generation's start, when the previous generation ended; failing both, now (it is current now).
 */
function validFrom(log: BackupLog, generation: number, frame: number, now: number): number {
  if (frame > 0) return log.commits(generation).find((c) => c.frames === frame)?.at ?? now;
  const chain = log.chain();
  const previous = chain.archived.find((a) => a.generation === generation - 1);
  return previous && !chain.lost.includes(generation - 1) ? previous.endedAt : now;
}

/** Unpacks a downloaded snapshot into `dest`, checking it against its SHA-256. */
export async function unpackSnapshot(
  gzFile: string,
  dest: string,
  expected: string | undefined,
): Promise<void> {
  const sha = createHash("sha256");
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      sha.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(createReadStream(gzFile), createGunzip(), tap, createWriteStream(dest, { flags: "wx" }));
  } catch (e) {
    throw new DamagedObjectError(`the snapshot can't be unpacked: ${(e as Error).message}`);
  }
  if (expected !== undefined && sha.digest("hex") !== expected) {
    throw new DamagedObjectError("the snapshot doesn't match its checksum");
  }
  if ((await stat(dest)).size % 4096 !== 0) throw new DamagedObjectError("the snapshot is not whole pages");
}
