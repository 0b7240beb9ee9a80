import type { EngineConnection } from "./connection.js";
import type { DatabaseKey } from "./encryption/keys.js";
import { FrameLog } from "./frame-log.js";
import { NextCommit } from "./next-commit.js";
import { SchemaEpoch } from "./schema-follower.js";
import { SyncHorizons } from "./sync-horizons.js";
import { WriteLock } from "./write-lock.js";

/** What a hosted database asks of the node that hosts it (see hosted-databases.ts). */
export interface HostingNode {
  checkout(db: HostedDatabase, key: DatabaseKey | undefined): EngineConnection;
  checkin(db: HostedDatabase, conn: EngineConnection, attached: readonly string[]): void;
  hold(db: HostedDatabase): () => void;
  retire(db: HostedDatabase): void;
  afterWrite(db: HostedDatabase, conn: EngineConnection): void;
  /** `db`'s frame log recorded commits that added frames (see FrameLog.settle). */
  recorded(db: HostedDatabase): void;
  /** A checkpoint Shoal didn't make ended `generation` of `db`'s history (see FrameLog). */
  lostHistory(db: HostedDatabase, generation: number): void;
}

/** A database's connections as the pool tracks them (pool.ts keeps the budget across databases). */
export interface ConnectionsOf {
  idle: EngineConnection[];
  /** Connections open now in this process, idle or checked out. */
  open: number;
  /** Connections checked out now, plus holds (see `hold`). */
  inUse: number;
  /** Connections opened before this retirement close when returned, instead of going back to idle. */
  retiredAt: number;
  /** Connections closed while others to the file stayed open, whose descriptors SQLite still holds. */
  parked: number;
}

/**
 * One database file hosted on this node (a primary's, or a copy being built or swapped) and
 * everything that runs it: its connections, its write lock, its frame log and the exports that
 * pin its file, and what its clients hold of it: the streams open on it, the pulls waiting for its
 * next commit, and where each replica's sync of its history stops. Its lifecycle is here too:
 * `retire` closes what is open and lets no connection opened before it go back to idle; the node's
 * `remove` retires it and forgets it with its files. Callers hold this object instead of reaching
 * maps by path or id.
 */
export class HostedDatabase {
  readonly conns: ConnectionsOf = { idle: [], open: 0, inUse: 0, retiredAt: 0, parked: 0 };
  /** Whether the node has forgotten this database (its files are gone or going). */
  removed = false;
  /**
   * Whether the database may have replicas that must hear of its commits: its group has other
   * locations, as its writers last saw it. Unknown counts as yes.
   */
  followed = true;
  /** Moves whenever a statement that may change the schema runs on any of its connections. */
  readonly schemaEpoch = new SchemaEpoch();
  /** Pulls waiting for its next commit (woken by the node when its frame log records one). */
  readonly nextCommit = new NextCommit();
  private lock: WriteLock | undefined;
  private log: FrameLog | undefined;
  private horizons: SyncHorizons | undefined;
  private exports = 0;
  private streams = 0;

  constructor(
    readonly path: string,
    private readonly node: HostingNode,
  ) {}

  /** A connection, opened if no idle one fits; `key` for an encrypted database. */
  checkout(key?: DatabaseKey): EngineConnection {
    return this.node.checkout(this, key);
  }

  /** Returns a connection; one left inside a transaction is rolled back, `attached` aliases detached. */
  checkin(conn: EngineConnection, attached: readonly string[] = []): void {
    this.node.checkin(this, conn, attached);
  }

  /**
   * Counts as a connection in use without opening one, until the returned function is called: the
   * last connection can't close (and checkpoint) meanwhile. For reading an encrypted database's
   * raw file without its key.
   */
  hold(): () => void {
    return this.node.hold(this);
  }

  /** Connections checked out now: the file can't be swapped under them. */
  get inUse(): number {
    return this.conns.inUse;
  }

  /** Closes the idle connections; busy ones close when returned. */
  retire(): void {
    this.node.retire(this);
  }

  /**
   * Retires the connections and waits until none is in use, up to `ms`; false if some still were.
   * A caller about to replace the file holds the write lock, so no writer comes back meanwhile.
   */
  async drain(ms: number): Promise<boolean> {
    this.retire();
    const deadline = Date.now() + ms;
    while (this.conns.inUse > 0) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return true;
  }

  /**
   * Counts a new stream on this database (each may hold a connection, and its descriptors, for as
   * long as it stays open); false when it already has `limit`.
   */
  takeStream(limit: number): boolean {
    if (this.streams >= limit) return false;
    this.streams++;
    return true;
  }

  releaseStream(): void {
    if (this.streams > 0) this.streams--;
  }

  /** Streams open on this database now. */
  get openStreams(): number {
    return this.streams;
  }

  /** Where each replica's sync of this primary's history stops (see sync-horizons.ts). */
  get syncHorizons(): SyncHorizons {
    this.horizons ??= new SyncHorizons();
    return this.horizons;
  }

  /** The one writer at a time, shared by every connection to the file. */
  get writeLock(): WriteLock {
    this.lock ??= new WriteLock();
    return this.lock;
  }

  /** The frame log (a primary's committed history), read from disk on first use. */
  get frameLog(): FrameLog {
    this.log ??= new FrameLog(
      this.path,
      (g) => this.node.lostHistory(this, g),
      () => this.node.recorded(this),
    );
    return this.log;
  }

  /**
   * After a write transaction ended on `conn` (its writer still holds the write lock): notes the
   * commit for the frame log, which records it and tells the node's listeners by the end of the
   * turn; ends the generation when the WAL has grown large.
   */
  afterWrite(conn: EngineConnection): void {
    this.node.afterWrite(this, conn);
  }

  /** Whether an export is reading the file now (the generation must not end under it). */
  get exporting(): boolean {
    return this.exports > 0;
  }

  /** Runs `fn` while the database file must not change (an export is reading it). */
  async whileExporting<T>(fn: () => Promise<T>): Promise<T> {
    this.exports++;
    try {
      return await fn();
    } finally {
      this.exports--;
    }
  }

  /** Whether the frame log was opened (a database only read as a copy has none). */
  get hasFrameLog(): boolean {
    return this.log !== undefined;
  }

  /** Records what the frame log has noted, then closes the descriptors it keeps between commits. */
  closeFrameLog(): void {
    this.log?.settle();
    this.log?.closeFiles();
  }

  /** Forgets the frame log: the files under it are being replaced or removed. */
  dropFrameLog(): void {
    this.log?.closeFiles();
    this.log = undefined;
  }
}
