import { rmSync } from "node:fs";
import { type ArchiveCopy, archiveFrames } from "./frame-archive.js";
import { type Meta, saveMeta } from "./frame-log-meta.js";
import { dropStagedBase, type GenerationChain, stageBase } from "./history.js";

export interface EndingGeneration {
  /** The frame log's folder, the database file and its WAL. */
  dir: string;
  dbPath: string;
  walPath: string;
  /** The log's state before the rollover. */
  meta: Meta;
  /** The background copy of the generation's frames, if one was started (see frame-archive.ts). */
  copy: ArchiveCopy | undefined;
  /** Frames committed in the generation. */
  frames: number;
  /** Where its frames are copied whole when the background copy can't be used. */
  wholePath: string;
  chain(): GenerationChain;
  /** A RESTART checkpoint; reports whether it completed. */
  checkpoint(): boolean;
}

/** How the first half of a rollover went (see `endGeneration`). */
export type GenerationEnd =
  | { kind: "ended"; archive: string; staged: string | undefined }
  /** The checkpoint couldn't complete (a reader on an old snapshot); everything was undone. */
  | { kind: "busy" }
  /**
   * A step failed (a full disk, most often). Before the checkpoint, everything was undone. In
   * the checkpoint, the file may hold part of the generation: the state stays "retiring"
   * (`retiring`, as on disk), so the generation ends as lost (its replicas start over).
   */
  | { kind: "failed"; error: unknown; retiring: Meta | undefined };

/**
 * The first half of a rollover, up to and including its checkpoint: the generation's frames
 * copied to a temporary archive, the database file kept as its starting image (for history),
 * the state marked "retiring" (durably: from the checkpoint's first write the file is no longer
 * the generation's start, and a process ending before the rollover is recorded must find that
 * out, see FrameLog's `abandonRetiring`), then the checkpoint.
 */
export function endGeneration(g: EndingGeneration): GenerationEnd {
  const generation = g.meta.generation;
  const retiring = g.meta.salts ? { ...g.meta, retiring: { ...g.meta.salts, frames: g.frames } } : undefined;
  let archive: string | undefined;
  let staged: string | undefined;
  let checkpointing = false;
  let done: boolean;
  try {
    archive = archiveFrames(g.copy, g.walPath, generation, g.frames, g.wholePath);
    try {
      staged = stageBase(g.dir, g.dbPath, g.chain());
    } catch {
      // History is a convenience of replication's log: without an image it starts again later.
      staged = undefined;
    }
    if (retiring) saveMeta(g.dir, retiring, true);
    checkpointing = true;
    done = g.checkpoint();
  } catch (error) {
    removeAll([g.wholePath, archive], staged);
    if (checkpointing) return { kind: "failed", error, retiring };
    restoreMeta(g);
    return { kind: "failed", error, retiring: undefined };
  }
  if (!done || archive === undefined) {
    removeAll([g.wholePath, archive], staged);
    restoreMeta(g);
    return { kind: "busy" };
  }
  return { kind: "ended", archive, staged };
}

/** Puts back the state from before the rollover, if the disk lets it. */
function restoreMeta(g: EndingGeneration): void {
  try {
    saveMeta(g.dir, g.meta);
  } catch {
    // Left saying "retiring": a later state write replaces it, and a restart before that ends
    // the generation as lost (its replicas start over), which is safe.
  }
}

function removeAll(files: Array<string | undefined>, staged: string | undefined): void {
  for (const f of files) if (f) rmSync(f, { force: true });
  dropStagedBase(staged);
}
