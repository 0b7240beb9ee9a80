import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";
import { cutToSize, replayFrames } from "../engine/history.js";
import { FRAME_BYTES } from "../engine/wal.js";
import type { FrameSource } from "./frame-source.js";

/** Where a replica stands: everything of `generation` up to frame `frame` is in its file. */
export interface FollowPosition {
  generation: number;
  frame: number;
}

export interface FollowerOptions {
  /** The replica's database file. Beside it: `.follow` (the position) and transient files. */
  path: string;
  source: FrameSource;
  /**
   * Called before the file changes: connections reading the replica must close (an open one
   * keeps serving the pages it has cached). Also told when the file is replaced whole.
   */
  beforeApply?: () => void;
  /** Frames asked for per request (the primary serves at most 1024). */
  batchFrames?: number;
}

/** What one `sync` did. */
export interface FollowResult {
  frames: number;
  bootstrapped: boolean;
  position: FollowPosition;
}

const COMPANIONS = ["-wal", "-shm", ".follow", ".pending", ".bootstrap", ".follow.tmp"];

/**
 * A replica of a primary kept without its key: the primary's file copied as stored at a
 * generation's start, then its committed WAL frames written onto it page by page, as a checkpoint
 * would. Both are the primary's encrypted bytes, so the replica is encrypted with the same key and
 * this code never needs it; a read opens the replica with the key the request brings.
 *
 * Crash safety: the position is saved only after the pages it covers are written and synced, and
 * writing a run of frames again onto a file that already has some of them gives the same file,
 * so after a crash the run is fetched and written again. Frames of a transaction still arriving
 * (one larger than a batch) wait in `.pending` on disk, not in memory; that file is dropped at
 * start, since its frames are fetched again from the saved position.
 */
export class KeylessFollower {
  readonly path: string;
  private readonly batch: number;
  private pos: FollowPosition | undefined;
  private pendingFrames = 0;
  private running: Promise<FollowResult> | undefined;
  private queued: Promise<FollowResult> | undefined;

  constructor(private readonly opts: FollowerOptions) {
    this.path = opts.path;
    this.batch = Math.min(opts.batchFrames ?? 1024, 1024);
    rmSync(`${this.path}.pending`, { force: true });
    rmSync(`${this.path}.bootstrap`, { force: true });
    this.pos = existsSync(this.path) ? this.load() : undefined;
  }

  /** Where the replica stands (undefined before its first bootstrap). */
  get position(): FollowPosition | undefined {
    return this.pos && { ...this.pos };
  }

  /**
   * Brings the replica up to what the primary has committed: bootstraps it first when needed
   * (or when the primary no longer has the frames it needs). Calls while one runs share one more
   * run after it, so a burst of commits costs at most two, and every caller's answer covers what
   * was committed before it called.
   */
  sync(): Promise<FollowResult> {
    if (!this.running) {
      this.running = this.pull().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.sync();
      });
    return this.queued;
  }

  /** Resolves once no sync runs or waits to run. */
  async idle(): Promise<void> {
    await (this.queued ?? this.running)?.catch(() => undefined);
  }

  /** Removes the replica and everything the follower keeps beside it, once a running sync ends. */
  async drop(): Promise<void> {
    await this.idle();
    this.opts.beforeApply?.();
    for (const s of ["", ...COMPANIONS]) rmSync(this.path + s, { force: true });
    this.pos = undefined;
    this.pendingFrames = 0;
  }

  private async pull(): Promise<FollowResult> {
    let frames = 0;
    let bootstrapped = false;
    if (!this.pos) {
      await this.bootstrap();
      bootstrapped = true;
    }
    for (let fresh = 0; ; ) {
      const pos = this.pos!;
      const start = pos.frame + this.pendingFrames + 1;
      const read = await this.opts.source.frames(pos.generation, start, start + this.batch);
      if (read.kind === "frames") {
        frames += this.take(read.data);
      } else if (read.kind === "past-end" && read.latest === pos.generation) {
        return { frames, bootstrapped, position: { ...pos } };
      } else if (read.kind === "past-end" && read.latest > pos.generation) {
        // Every frame of this generation is applied: the file is now the next one's start.
        this.clearPending();
        this.save({ generation: pos.generation + 1, frame: 0 });
      } else {
        // The frames this replica needs are gone (pruned, lost), or the primary is behind it (its
        // history was reset): start again from a fresh copy.
        if (++fresh > 2) throw new Error("the primary keeps losing the frames a fresh replica needs");
        await this.bootstrap();
        bootstrapped = true;
      }
    }
  }

  /** Applies the frames up to the last commit among those received; keeps the rest pending. */
  private take(data: Buffer): number {
    const count = Math.floor(data.length / FRAME_BYTES);
    let last = -1;
    for (let i = count - 1; i >= 0 && last < 0; i--)
      if (data.readUInt32BE(i * FRAME_BYTES + 4) !== 0) last = i;
    if (last < 0) {
      appendFileSync(`${this.path}.pending`, data.subarray(0, count * FRAME_BYTES), { mode: 0o600 });
      this.pendingFrames += count;
      return 0;
    }
    const run = this.pendingFrames + last + 1;
    this.apply(data.subarray(0, (last + 1) * FRAME_BYTES));
    this.clearPending();
    this.save({ generation: this.pos!.generation, frame: this.pos!.frame + run });
    if (last + 1 < count) this.take(data.subarray((last + 1) * FRAME_BYTES, count * FRAME_BYTES));
    return run;
  }

  /** Writes the pending frames, then `tail` (ending with a commit frame), onto the replica file. */
  private apply(tail: Buffer): void {
    this.opts.beforeApply?.();
    const fd = openSync(this.path, "r+");
    try {
      let size: number | undefined;
      if (this.pendingFrames > 0) {
        const src = openSync(`${this.path}.pending`, "r");
        try {
          const buf = Buffer.alloc(this.batch * FRAME_BYTES);
          for (let done = 0; done < this.pendingFrames; done += this.batch) {
            const n = Math.min(this.batch, this.pendingFrames - done) * FRAME_BYTES;
            readSync(src, buf, 0, n, done * FRAME_BYTES);
            size = replayFrames(fd, buf.subarray(0, n)) ?? size;
          }
        } finally {
          closeSync(src);
        }
      }
      size = replayFrames(fd, tail) ?? size;
      cutToSize(fd, size);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Replaces the replica with the primary's file at its current generation's start. The old
   * position goes first, so a crash before the new one is saved bootstraps again.
   */
  private async bootstrap(): Promise<void> {
    const tmp = `${this.path}.bootstrap`;
    mkdirSync(dirname(this.path), { recursive: true });
    let generation = await this.opts.source.currentGeneration();
    for (let tries = 0; ; tries++) {
      const moved = await this.opts.source.exportInto(generation, tmp);
      if (!moved) break;
      if (tries >= 5) throw new Error("the primary's generation kept changing while a replica was copied");
      generation = moved.current;
    }
    const fd = openSync(tmp, "r");
    fsyncSync(fd);
    closeSync(fd);
    this.opts.beforeApply?.();
    rmSync(`${this.path}.follow`, { force: true });
    this.pos = undefined;
    this.clearPending();
    // A reader's leftovers describe the old file; SQLite would otherwise trust them.
    rmSync(`${this.path}-wal`, { force: true });
    rmSync(`${this.path}-shm`, { force: true });
    renameSync(tmp, this.path);
    this.save({ generation, frame: 0 });
  }

  private clearPending(): void {
    rmSync(`${this.path}.pending`, { force: true });
    this.pendingFrames = 0;
  }

  private load(): FollowPosition | undefined {
    try {
      const p = JSON.parse(readFileSync(`${this.path}.follow`, "utf8")) as FollowPosition;
      return Number.isInteger(p.generation) && Number.isInteger(p.frame) ? p : undefined;
    } catch {
      return undefined;
    }
  }

  private save(pos: FollowPosition): void {
    const tmp = `${this.path}.follow.tmp`;
    writeFileSync(tmp, JSON.stringify(pos));
    const fd = openSync(tmp, "r");
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, `${this.path}.follow`);
    this.pos = pos;
  }
}
