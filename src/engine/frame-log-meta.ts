import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

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
  salts?: { salt1: number; salt2: number };
  /** Frames of every earlier generation together: the replication index counts across generations. */
  baseIndex: number;
  archived: Archived[];
  /** Generations whose frames were lost (a checkpoint Shoal didn't make): replicas must start over. */
  lost: number[];
}

/** The log's state from `dir`, or a first generation's when it has none yet. */
export function loadMeta(dir: string): Meta {
  mkdirSync(dir, { recursive: true });
  try {
    return JSON.parse(readFileSync(path.join(dir, "meta.json"), "utf8")) as Meta;
  } catch {
    return { generation: 1, baseIndex: 0, archived: [], lost: [] };
  }
}

/** Replaces `dir`'s state whole (written aside, then renamed over). */
export function saveMeta(dir: string, meta: Meta): void {
  const file = path.join(dir, "meta.json");
  writeFileSync(`${file}.tmp`, JSON.stringify(meta));
  renameSync(`${file}.tmp`, file);
}
