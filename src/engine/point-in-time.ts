import { closeSync, copyFileSync, openSync, rmSync } from "node:fs";
import type { DatabaseKey } from "./encryption/keys.js";
import type { FrameLog } from "./frame-log.js";
import { basePath, chainIntact, cutToSize, readBase, replayFrames } from "./history.js";
import { finishDatabaseFile } from "./snapshot.js";

export type RestoreOutcome =
  /** Restored; `commitAt` is when the last replayed commit was recorded (null: none, the base image). */
  | { kind: "restored"; commitAt: number | null; earliest: number }
  /** The moment is older than the history kept: `earliest` is the oldest restorable moment. */
  | { kind: "before-history"; earliest: number }
  | { kind: "future"; now: number };

interface Start {
  file: string;
  generation: number;
  /** The oldest moment whose state the start image plus the frames after it describe. */
  earliest: number;
}

interface Commit {
  generation: number;
  frames: number;
  at: number;
}

const BATCH = 1024;

/**
 * Rebuilds a database as it was at moment `at` (ms) into a new file `dest`: the state after the
 * last commit recorded at or before `at`. It starts from the history's starting image (or, when
 * there is none yet, from the database file itself, which is the current generation's start)
 * and replays the recorded frames onto it in order, the way checkpoints would have.
 *
 * Runs synchronously: no checkpoint can move the live files while it reads them.
 */
export function restoreAsOf(
  log: FrameLog,
  at: number,
  dest: string,
  opts: { createdAt: number; now: number; key?: DatabaseKey },
): RestoreOutcome {
  if (at > opts.now) return { kind: "future", now: opts.now };
  const start = startOf(log, opts);
  const commits = commitsSince(log, start.generation, opts.now);
  const earliest = Math.min(start.earliest, opts.now);
  if (at < earliest) return { kind: "before-history", earliest };
  let target: Commit | undefined;
  for (const c of commits) if (c.at <= at) target = c;
  try {
    copyFileSync(start.file, dest);
    if (target) {
      const fd = openSync(dest, "r+");
      try {
        let size: number | undefined;
        for (let g = start.generation; g <= target.generation; g++) {
          const upTo = g === target.generation ? target.frames : framesOf(log, g);
          size = replayGeneration(log, fd, g, upTo) ?? size;
        }
        cutToSize(fd, size);
      } finally {
        closeSync(fd);
      }
    }
    // Frames and images are the stored (encrypted) pages: only the final check needs the key.
    finishDatabaseFile(dest, opts.key);
  } catch (e) {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(dest + suffix, { force: true });
    throw e;
  }
  return { kind: "restored", commitAt: target?.at ?? null, earliest };
}

/** The oldest moment that can be restored, for messages and documentation. */
export function historyStart(log: FrameLog, opts: { createdAt: number; now: number }): number {
  return Math.min(startOf(log, opts).earliest, opts.now);
}

function startOf(log: FrameLog, opts: { createdAt: number; now: number }): Start {
  const chain = log.chain();
  const base = readBase(log.folder);
  const firstCommit = (g: number) => log.commits(g)[0]?.at;
  if (base && base.generation <= chain.current && chainIntact(chain, base.generation, chain.current)) {
    const started = base.startedAt ?? (base.generation === 1 ? opts.createdAt : null);
    return {
      file: basePath(log.folder, base),
      generation: base.generation,
      earliest: started ?? firstCommit(base.generation) ?? opts.now,
    };
  }
  // No usable image: the database file itself is the current generation's start.
  const previous = chain.archived.find((a) => a.generation === chain.current - 1);
  const started =
    previous && !chain.lost.includes(chain.current - 1)
      ? previous.endedAt
      : chain.current === 1
        ? opts.createdAt
        : null;
  return {
    file: log.dbPath,
    generation: chain.current,
    earliest: started ?? firstCommit(chain.current) ?? opts.now,
  };
}

/**
 * Every recorded commit from generation `from` on, oldest first. Frames a generation holds past
 * its last recorded commit (a commit whose time was never written down) count as committed when
 * the generation ended, or now for the current one: never earlier than they really were.
 */
function commitsSince(log: FrameLog, from: number, now: number): Commit[] {
  const chain = log.chain();
  const out: Commit[] = [];
  for (let g = from; g <= chain.current; g++) {
    const list = log.commits(g).map((c) => ({ generation: g, frames: c.frames, at: c.at }));
    const total = framesOf(log, g);
    const last = list.at(-1);
    if (total > (last?.frames ?? 0)) {
      const ended = chain.archived.find((a) => a.generation === g)?.endedAt ?? now;
      list.push({ generation: g, frames: total, at: Math.max(ended, last?.at ?? 0) });
    }
    out.push(...list);
  }
  return out;
}

function framesOf(log: FrameLog, generation: number): number {
  if (generation === log.generation) return log.position().frame;
  return log.chain().archived.find((a) => a.generation === generation)?.frames ?? 0;
}

function replayGeneration(log: FrameLog, fd: number, generation: number, frames: number): number | undefined {
  let size: number | undefined;
  for (let start = 1; start <= frames; start += BATCH) {
    const read = log.read(generation, start, Math.min(start + BATCH, frames + 1));
    if (read.kind !== "frames") throw new Error(`frames of generation ${generation} are missing`);
    size = replayFrames(fd, read.data) ?? size;
  }
  return size;
}
