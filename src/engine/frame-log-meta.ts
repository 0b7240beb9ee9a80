import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import path from "node:path";

/** The folder of a primary's frame log: archives, commit times, its starting image, the schema journal. */
export function frameLogFolder(dbPath: string): string {
  return `${dbPath}.log`;
}

/** One finished generation whose frames are kept for replicas still reading it. */
export interface Archived {
  generation: number;
  frames: number;
  /** Replication index at the generation's start. */
  startIndex: number;
  endedAt: number;
}

/** What a frame log keeps in its folder's `meta.json` between runs. */
export interface Meta {
  /** Current generation, from 1: it started at the last checkpoint. */
  generation: number;
  /** Salts of the WAL cycle holding the current generation's frames, once it has any. */
  salts?: WalSalts;
  /**
   * The WAL cycle the last generation ended in, until the current one has frames of its own. A
   * generation ends with a RESTART checkpoint, which leaves that cycle's frames in the WAL (all
   * of them already in the database file) until the next write starts a new cycle over them:
   * frames with these salts belong to no current generation.
   */
  retired?: WalSalts & { frames: number };
  /**
   * Written, and flushed to disk, just before a rollover's checkpoint and replaced once the
   * rollover is recorded: found on opening, it means the checkpoint may have changed the file.
   */
  retiring?: WalSalts & { frames: number };
  /** Frames of every earlier generation together: the replication index counts across generations. */
  baseIndex: number;
  archived: Archived[];
  /** Generations whose frames were lost (a checkpoint Shoal didn't make): replicas must start over. */
  lost: number[];
}

export interface WalSalts {
  salt1: number;
  salt2: number;
}

export function sameSalts(a: WalSalts, b: WalSalts): boolean {
  return a.salt1 === b.salt1 && a.salt2 === b.salt2;
}

/** The log's state from `dir`, or undefined when it has none (nothing is created). */
export function peekMeta(dir: string): Meta | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dir, "meta.json"), "utf8")) as Meta;
  } catch {
    return undefined;
  }
}

/** The log's state from `dir`, or a first generation's when it has none yet. */
export function loadMeta(dir: string): Meta {
  mkdirSync(dir, { recursive: true });
  return peekMeta(dir) ?? { generation: 1, baseIndex: 0, archived: [], lost: [] };
}

/** `meta` without its retired cycle: the WAL is in the generation's own cycle, or emptied. */
export function withoutRetired(meta: Meta): Meta {
  const { retired: _, ...rest } = meta;
  return rest;
}

/** Replaces `dir`'s state whole (written aside, then renamed over; `durable`: flushed to disk). */
export function saveMeta(dir: string, meta: Meta, durable = false): void {
  const file = path.join(dir, "meta.json");
  const fd = openSync(`${file}.tmp`, "w");
  try {
    writeSync(fd, JSON.stringify(meta));
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(`${file}.tmp`, file);
  if (!durable) return;
  const dirFd = openSync(dir, "r");
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}

/** The state once the current generation ended with a checkpoint, its `frames` archived. */
export function rolledOver(meta: Meta, frames: number, now: number): Meta {
  const g = meta.generation;
  return {
    generation: g + 1,
    baseIndex: meta.baseIndex + frames,
    archived: [...meta.archived, { generation: g, frames, startIndex: meta.baseIndex, endedAt: now }],
    lost: meta.lost,
    ...(meta.salts ? { retired: { ...meta.salts, frames } } : {}),
  };
}

/** The state once the current generation ended as lost: its `frames` counted, never served. */
export function lostGeneration(meta: Meta, frames: number, retired?: Meta["retired"]): Meta {
  return {
    generation: meta.generation + 1,
    baseIndex: meta.baseIndex + frames,
    archived: meta.archived,
    lost: [...meta.lost, meta.generation],
    ...(retired ? { retired } : {}),
  };
}

/** A run of frames of one generation and where it starts in the replication index. */
export interface GenerationSpan {
  generation: number;
  startIndex: number;
  frames: number;
}

export interface FrameHistory {
  current: GenerationSpan;
  archived: readonly GenerationSpan[];
  /** Generations whose frames are gone (a checkpoint Shoal didn't make, a replaced file). */
  lost: readonly number[];
  walPath: string;
}

export type FrameRead =
  | { kind: "frames"; data: Buffer }
  /** Nothing at or after `start` in that generation: the client is caught up, or must move on. */
  | { kind: "past-end"; latest: number }
  /** The generation's frames are no longer available. */
  | { kind: "gone"; latest: number };
