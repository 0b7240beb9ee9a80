import type { EngineConnection } from "./connection.js";
import { FrameLog } from "./frame-log.js";

/** A new committed position of a database, as replication wants to hear about it. */
export interface CommitEvent {
  path: string;
  generation: number;
  frame: number;
  index: number;
  at: number;
}

/** Frames in the current generation beyond which the next commit ends it with a checkpoint. */
const ROLLOVER_FRAMES = 4000;

/**
 * The frame logs of every primary on this node, opened on first use. Also where the rules about
 * checkpoints live: a generation ends when its WAL grows past a size, and before a database's last
 * connection closes (SQLite would otherwise checkpoint on close, behind the log's back).
 */
export class FrameLogs {
  private readonly logs = new Map<string, FrameLog>();
  private readonly exporting = new Map<string, number>();
  private readonly listeners: Array<(e: CommitEvent) => void> = [];

  get(path: string): FrameLog {
    let log = this.logs.get(path);
    if (!log) {
      log = new FrameLog(path);
      this.logs.set(path, log);
    }
    return log;
  }

  /** Calls `listener` after every commit that added frames. */
  onCommit(listener: (e: CommitEvent) => void): void {
    this.listeners.push(listener);
  }

  /**
   * After a write transaction ended on `conn` (its writer still holds the write lock): records the
   * new frames, tells listeners, and ends the generation when the WAL has grown large.
   */
  afterWrite(conn: EngineConnection): void {
    const log = this.get(conn.path);
    if (log.afterCommit() > 0) {
      const p = log.position();
      const event = { path: conn.path, ...p, at: Date.now() };
      for (const l of this.listeners) l(event);
    }
    if (log.pending > ROLLOVER_FRAMES && !this.exporting.get(conn.path)) this.rollover(conn);
  }

  /** Ends the current generation now; a busy checkpoint (a reader on an old snapshot) waits for later. */
  rollover(conn: EngineConnection): boolean {
    return this.get(conn.path).rollover(() => conn.checkpoint());
  }

  /** Runs `fn` while the database file must not change (an export is reading it). */
  async whileExporting<T>(path: string, fn: () => Promise<T>): Promise<T> {
    this.exporting.set(path, (this.exporting.get(path) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      const n = (this.exporting.get(path) ?? 1) - 1;
      if (n === 0) this.exporting.delete(path);
      else this.exporting.set(path, n);
    }
  }

  /**
   * Deletes archived generations that ended before `before` (keeping each database's newest
   * archive). A replica still inside a deleted generation gets 410 and must start over.
   */
  prune(before: number): number {
    let dropped = 0;
    for (const log of this.logs.values()) dropped += log.prune(before, 1).length;
    return dropped;
  }

  /** Closes the descriptors a database's log keeps between commits: its last connection is closing. */
  release(path: string): void {
    this.logs.get(path)?.closeFiles();
  }

  /** Forgets a database whose files are being removed. */
  forget(path: string): void {
    this.logs.get(path)?.closeFiles();
    this.logs.delete(path);
  }
}
