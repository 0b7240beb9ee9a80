import { failpoint } from "../lib/failpoints.js";
import type { EngineConnection } from "./connection.js";
import type { DatabaseKey } from "./encryption/keys.js";
import { HostedDatabase, type HostingNode } from "./hosted-database.js";
import type { InstanceFiles } from "./instance-files.js";
import { ConnectionPool, type PoolOptions, type PoolStats } from "./pool.js";
import { leftInRetiredCycle } from "./retired-cycle.js";
import { WalRestartBusyError } from "./sqlite-errors.js";

/** A new committed position of a database, as replication wants to hear about it. */
export interface CommitEvent {
  path: string;
  generation: number;
  frame: number;
  index: number;
  at: number;
  /** Whether the database may have replicas to tell (see `HostedDatabase.followed`). */
  followed: boolean;
}

/**
 * Frames in the current generation beyond which its frames are copied towards their archive in
 * the background; the first commit after that copy is done ends the generation with a checkpoint.
 */
const ROLLOVER_FRAMES = 4000;
/** Frames beyond which the next commit ends the generation even if that copy isn't done. */
const ROLLOVER_FRAMES_AT_MOST = 4 * ROLLOVER_FRAMES;
/**
 * After a rollover failed (a full disk, most often), the database's commits go on in the same
 * generation and the next try waits this long: each try copies up to 16 MB of frames.
 */
const ROLLOVER_RETRY_MS = 5000;

/** A step after a commit that failed; the commit stands (see `onStepFailed`). */
export type CommitStep = "frame-log" | "notice";

/**
 * The databases this node runs, one HostedDatabase per file, created on first use; the budget of
 * connections they share; and the rules about checkpoints: a generation ends when its WAL grows
 * past a size, and before a database's last connection closes (SQLite would otherwise checkpoint
 * on that close, behind the frame log's back).
 */
export class HostedDatabases {
  private readonly byPath = new Map<string, HostedDatabase>();
  private waitsStopped = false;
  private readonly listeners: Array<(e: CommitEvent) => void> = [];
  private readonly lostListeners: Array<(path: string, generation: number) => void> = [];
  private readonly pool: ConnectionPool;
  private readonly node: HostingNode;
  /** Databases with commits their frame logs haven't recorded yet, recorded at the turn's end. */
  private readonly unsettled = new Set<HostedDatabase>();
  /** Databases whose last rollover failed, with when the next may be tried. */
  private readonly rolloverRetryAt = new WeakMap<HostedDatabase, number>();
  private readonly stepListeners: Array<(step: CommitStep, path: string, error: unknown) => void> = [];

  constructor(
    opts: Omit<PoolOptions, "beforeLastClose" | "afterFirstOpen">,
    private readonly files: Pick<InstanceFiles, "path" | "remove">,
  ) {
    this.pool = new ConnectionPool({
      ...opts,
      beforeLastClose: (db, conn) => this.beforeLastClose(db, conn),
      afterFirstOpen: (db, conn) => this.afterFirstOpen(db, conn),
    });
    const pool = this.pool;
    this.node = {
      checkout: (db: HostedDatabase, key: DatabaseKey | undefined) => pool.checkout(db, key),
      checkin: (db: HostedDatabase, conn: EngineConnection, attached: readonly string[]) =>
        pool.checkin(db, conn, attached),
      hold: (db: HostedDatabase) => pool.hold(db),
      retire: (db: HostedDatabase) => pool.retire(db),
      afterWrite: (db: HostedDatabase, conn: EngineConnection) => this.afterWrite(db, conn),
      recorded: (db: HostedDatabase) => this.recorded(db),
      lostHistory: (db: HostedDatabase, generation: number) => {
        for (const l of this.lostListeners) l(db.path, generation);
      },
    };
  }

  /** The database at `path`, created (nothing opened yet) if this node hasn't run it since it started. */
  at(path: string): HostedDatabase {
    let db = this.byPath.get(path);
    if (!db) {
      db = new HostedDatabase(path, this.node);
      if (this.waitsStopped) db.nextCommit.close();
      this.byPath.set(path, db);
    }
    return db;
  }

  /** Shutting down: every pull waiting for a commit answers now, and later ones don't wait. */
  stopWaits(): void {
    this.waitsStopped = true;
    for (const db of this.byPath.values()) db.nextCommit.close();
  }

  /** Pulls waiting for a commit, all databases together (tests, diagnostics). */
  get commitWaiters(): number {
    let n = 0;
    for (const db of this.byPath.values()) n += db.nextCommit.size;
    return n;
  }

  /** The database instance of `dbId` in `location`. */
  of(location: string, dbId: string): HostedDatabase {
    return this.at(this.files.path(location, dbId));
  }

  /** The database at `path` if this node has run it since it started. */
  find(path: string): HostedDatabase | undefined {
    return this.byPath.get(path);
  }

  /**
   * Removes the instance of `dbId` in `location` with its files: its connections are retired (busy
   * ones close when returned, whoever still holds the object), its frame log's descriptors
   * closed, then every file of it deleted. A request arriving later finds no file.
   */
  remove(location: string, dbId: string, keepFiles = false): void {
    const path = this.files.path(location, dbId);
    const db = this.byPath.get(path);
    if (db) {
      this.byPath.delete(path);
      db.removed = true;
      db.retire();
      db.dropFrameLog();
      // A pull waiting on it looks again, and finds it gone.
      db.nextCommit.wake();
    }
    if (!keepFiles) this.files.remove(location, dbId);
  }

  /** Calls `listener` after every commit that added frames. */
  onCommit(listener: (e: CommitEvent) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Calls `listener` when a step that follows a commit failed: a listener of `onCommit` threw, or
   * the frame log couldn't record or roll over (a full disk). The commit stands either way; what
   * failed is tried again (the record at the next read or commit, a rollover after a pause).
   */
  onStepFailed(listener: (step: CommitStep, path: string, error: unknown) => void): void {
    this.stepListeners.push(listener);
  }

  /**
   * Calls `listener` when a database's current generation ended without Shoal's checkpoint (its
   * WAL was replaced or deleted under it): its frames can't be served, replicas in it start over.
   */
  onLostHistory(listener: (path: string, generation: number) => void): void {
    this.lostListeners.push(listener);
  }

  /**
   * Deletes archived generations that ended before `before` (keeping each database's newest
   * archive). A replica still inside a deleted generation gets 410 and must start over.
   */
  prune(before: number): number {
    let dropped = 0;
    for (const db of this.byPath.values()) if (db.hasFrameLog) dropped += db.frameLog.prune(before, 1).length;
    return dropped;
  }

  /** The most connections open at once. */
  get connectionLimit(): number {
    return this.pool.limit;
  }

  stats(): PoolStats {
    return this.pool.stats();
  }

  /** Closes every idle connection and waits until they are really closed (shutdown). */
  closeAll(): Promise<void> {
    return this.pool.closeAll();
  }

  /** Ends `db`'s current generation now; a busy checkpoint (a reader on an old snapshot) waits for later. */
  rollover(db: HostedDatabase, conn: EngineConnection): boolean {
    return db.frameLog.rollover(() => conn.checkpoint("RESTART"));
  }

  /**
   * A write transaction ended on `conn`. Its commit is noted, not recorded: under load, a turn of
   * the event loop commits many times, and one wal-index read and one line then record them all
   * (see FrameLog.noteCommit). Once the log counted enough frames, they are copied towards their
   * archive in the background, and the generation ends at the first commit after that copy is
   * done, while that writer holds the lock. Never throws: the commit stands whatever fails here,
   * which is told to `onStepFailed` and tried again later.
   */
  private afterWrite(db: HostedDatabase, conn: EngineConnection): void {
    try {
      this.recordAndRoll(db, conn);
    } catch (e) {
      for (const s of this.stepListeners) s("frame-log", db.path, e);
    }
  }

  private recordAndRoll(db: HostedDatabase, conn: EngineConnection): void {
    const log = db.frameLog;
    log.noteCommit();
    if (this.unsettled.size === 0) setImmediate(() => this.settleAll());
    this.unsettled.add(db);
    failpoint("after-commit.frame-log");
    if (log.recordedPending <= ROLLOVER_FRAMES || db.exporting) return;
    if ((this.rolloverRetryAt.get(db) ?? 0) > Date.now()) return;
    if (!log.rolloverPrepared && log.recordedPending <= ROLLOVER_FRAMES_AT_MOST) {
      log.prepareRollover();
      return;
    }
    try {
      this.rollover(db, conn);
    } catch (e) {
      // The generation goes on; the next try waits, as each copies up to 16 MB.
      this.rolloverRetryAt.set(db, Date.now() + ROLLOVER_RETRY_MS);
      throw e;
    }
    this.rolloverRetryAt.delete(db);
  }

  /** Records every commit noted this turn. */
  private settleAll(): void {
    const dbs = [...this.unsettled];
    this.unsettled.clear();
    for (const db of dbs) {
      // A removed database's log is gone with its files; a dropped one is replaced by its next use.
      if (db.removed || !db.hasFrameLog) continue;
      try {
        db.frameLog.settle();
      } catch (e) {
        // Left noted (see FrameLog.settle): whoever reads the log next records it, or hears why not.
        for (const s of this.stepListeners) s("frame-log", db.path, e);
      }
    }
  }

  /** A frame log recorded commits that added frames: tell the listeners its new position. */
  private recorded(db: HostedDatabase): void {
    db.nextCommit.wake();
    const event = { path: db.path, ...db.frameLog.position(), at: Date.now(), followed: db.followed };
    // One listener failing doesn't keep the others from hearing of the commit.
    for (const l of this.listeners) {
      try {
        failpoint("after-commit.notice");
        l(event);
      } catch (e) {
        for (const s of this.stepListeners) s("notice", db.path, e);
      }
    }
  }

  /**
   * Before this process uses a database it had nothing open on: a WAL left holding the cycle the
   * last generation ended in is emptied now, so that writes can't go on in that cycle (see
   * retired-cycle.ts). Most databases have no WAL or no frame log then: two small reads.
   */
  private afterFirstOpen(db: HostedDatabase, conn: EngineConnection): void {
    if (!leftInRetiredCycle(db.path)) return;
    if (!db.frameLog.finishRetiredCycle(() => conn.checkpoint("TRUNCATE"))) throw new WalRestartBusyError();
  }

  private beforeLastClose(db: HostedDatabase, conn: EngineConnection): void {
    // Its files are about to go: ending the generation would only write what is deleted next.
    if (db.removed) return;
    if (db.frameLog.pending > 0) this.rollover(db, conn);
    db.closeFrameLog();
  }
}
