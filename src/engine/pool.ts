import { existsSync } from "node:fs";
import Database from "libsql";
import { EngineConnection } from "./connection.js";
import { connectionBudget, descriptorsNearlyUsed } from "./descriptors.js";
import type { DatabaseKey } from "./encryption/keys.js";
import { keyFailure, keyOptions } from "./encryption/open.js";
import { defaultLimits, type ExecutionLimits } from "./execute.js";
import { flushClosing } from "./handle-release.js";
import {
  ConnectionsExhaustedError,
  isSqliteFailure,
  MissingFileError,
  primaryCode,
} from "./sqlite-errors.js";
import { WriteLock } from "./write-lock.js";

export interface PoolOptions {
  /**
   * Called with a database's last open connection just before it closes (SQLite would checkpoint
   * on that close; the frame log makes the checkpoint itself, as a generation boundary).
   */
  beforeLastClose?: (conn: EngineConnection) => void;
  /** Open connections kept across all databases; idle ones beyond this close, least recently used first. */
  maxOpen: number;
  /** `PRAGMA synchronous` for hosted databases: NORMAL survives a process crash, FULL also power loss. */
  synchronous: "NORMAL" | "FULL";
  /** Time limit, thread-pool gate and heap limit for statements (see execute.ts); the settings' defaults if unset. */
  limits?: ExecutionLimits;
  /**
   * The most connections open at once, busy ones included: the share of the process's file
   * descriptors connections may use. By default derived from the process's open-file limit.
   */
  maxConnectionsHard?: number;
}

/**
 * Caps the memory SQLite may allocate in this process (all databases and the store together):
 * past it an allocation fails with SQLITE_NOMEM instead of growing the process, which is how a
 * huge value (`randomblob(999999999)`) is refused before it exists. Page caches give memory back
 * as the soft limit (three quarters of it) nears.
 */
function applyHeapLimit(bytes: number): void {
  const db = new Database(":memory:");
  try {
    db.exec(`PRAGMA hard_heap_limit = ${Math.floor(bytes)}`);
    db.exec(`PRAGMA soft_heap_limit = ${Math.floor((bytes * 3) / 4)}`);
  } finally {
    db.close();
  }
}

export interface PoolStats {
  open: number;
  idle: number;
  inUse: number;
  databases: number;
}

interface Entry {
  idle: EngineConnection[];
  inUse: number;
  /** Set when the database is being removed: connections returned later are closed, not kept. */
  retired: boolean;
  /** Connections closed while others to the file stayed open, whose descriptors SQLite still holds (see checkin). */
  parked: number;
}

/**
 * Open connections to hosted database files. Opening is lazy (a database costs nothing until a
 * request reaches it) and the number of open connections is bounded, so a node holding many mostly
 * idle databases spends memory and descriptors on the busy ones only. A connection in use is never
 * closed under its stream; the bound can be exceeded while every connection is busy.
 */
export class ConnectionPool {
  /** Insertion order is recency: the first entry is the least recently used database. */
  private readonly entries = new Map<string, Entry>();
  private readonly locks = new Map<string, WriteLock>();
  /** The key check each connection of an encrypted database was opened with. */
  private readonly keyChecks = new WeakMap<EngineConnection, string>();
  private open = 0;
  private readonly hardLimit: number;
  private readonly limits: ExecutionLimits;

  constructor(private readonly opts: PoolOptions) {
    this.hardLimit = Math.max(1, opts.maxConnectionsHard ?? connectionBudget());
    this.limits = opts.limits ?? defaultLimits();
    applyHeapLimit(this.limits.heapLimitBytes);
  }

  /** The most connections open at once (see PoolOptions.maxConnectionsHard). */
  get limit(): number {
    return this.hardLimit;
  }

  /**
   * A connection to the database at `path`, opened if no idle one is available; `key` for an
   * encrypted database (only a connection opened with the same key is handed out). At the hard
   * limit (or when the process runs out of descriptors) idle connections of other databases close
   * first; only when every connection is busy is the request refused, with ConnectionsExhaustedError.
   */
  checkout(path: string, key?: DatabaseKey): EngineConnection {
    let entry = this.entries.get(path);
    if (entry) this.entries.delete(path);
    else entry = { idle: [], inUse: 0, retired: false, parked: 0 };
    this.entries.set(path, entry);
    entry.inUse++;
    const conn = this.takeIdle(entry, key);
    if (conn) return conn;
    try {
      if (this.open >= this.hardLimit) this.closeIdle(this.open - this.hardLimit + 1);
      if (this.open >= this.hardLimit) throw new ConnectionsExhaustedError(this.hardLimit);
      const opened = this.connectWithin(path, key);
      this.open++;
      this.evictBeyondLimit();
      return opened;
    } catch (e) {
      entry.inUse--;
      if (entry.inUse === 0 && entry.idle.length === 0 && !entry.retired) this.entries.delete(path);
      throw e;
    }
  }

  /** Opens a connection; when the process is out of descriptors, closes idle ones and tries once more. */
  private connectWithin(path: string, key: DatabaseKey | undefined): EngineConnection {
    try {
      return this.connect(path, key);
    } catch (e) {
      if (!isSqliteFailure(e) || primaryCode(e) !== "SQLITE_CANTOPEN" || !descriptorsNearlyUsed()) throw e;
      this.closeIdle(Number.POSITIVE_INFINITY);
    }
    try {
      return this.connect(path, key);
    } catch (e) {
      if (isSqliteFailure(e) && primaryCode(e) === "SQLITE_CANTOPEN" && descriptorsNearlyUsed())
        throw new ConnectionsExhaustedError(this.hardLimit);
      throw e;
    }
  }

  /** Returns a connection. One left inside a transaction is rolled back first. */
  checkin(conn: EngineConnection, attached: readonly string[] = []): void {
    const entry = this.entries.get(conn.path);
    if (entry) entry.inUse--;
    if (!conn.isClosed && conn.inTransaction) {
      try {
        conn.exec("ROLLBACK");
      } catch {
        this.closeConnection(conn);
      }
    }
    // Databases a caller attached must not stay visible to the next caller of this connection,
    // whose token may not grant them: detach them, or close the connection if that fails.
    for (const alias of attached) {
      if (conn.isClosed) break;
      try {
        conn.exec(`DETACH ${alias}`);
      } catch {
        this.closeConnection(conn);
      }
    }
    if (conn.isClosed) return;
    if (!entry || entry.retired) {
      this.closeConnection(conn);
      if (entry?.retired && entry.inUse === 0) this.entries.delete(conn.path);
      return;
    }
    entry.idle.push(conn);
    this.evictBeyondLimit();
    // SQLite keeps the descriptor of a connection closed while others to the same file stay open
    // (POSIX locks belong to the process, so closing it could drop theirs) until the last one
    // closes. Once none is in use, the idle ones close too: a burst of connections to one
    // database (a client opening streams without end) leaves no descriptors behind.
    if (entry.inUse === 0 && entry.parked > 0) this.closeIdleOf(conn.path, entry);
  }

  private closeIdleOf(path: string, entry: Entry): void {
    for (const idle of entry.idle.splice(0)) this.closeConnection(idle);
    entry.parked = 0;
    if (this.entries.get(path) !== entry || entry.retired) return;
    this.entries.delete(path);
    if (this.locks.get(path)?.idle) this.locks.delete(path);
  }

  /**
   * Counts as a connection in use without opening one, until the returned function is called: the
   * database's last connection can't close (and checkpoint) meanwhile. For reading an encrypted
   * database's raw file without its key (a replica's copy).
   */
  hold(path: string): () => void {
    let entry = this.entries.get(path);
    if (!entry) {
      entry = { idle: [], inUse: 0, retired: false, parked: 0 };
      this.entries.set(path, entry);
    }
    entry.inUse++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const e = this.entries.get(path);
      if (!e) return;
      e.inUse--;
      if (e.inUse === 0 && e.idle.length === 0) this.entries.delete(path);
    };
  }

  /** Connections to a database that are checked out now (a file can't be swapped under them). */
  inUse(path: string): number {
    return this.entries.get(path)?.inUse ?? 0;
  }

  /** The write lock of one database, shared by every connection to it. */
  writeLock(path: string): WriteLock {
    let lock = this.locks.get(path);
    if (!lock) {
      lock = new WriteLock();
      this.locks.set(path, lock);
    }
    return lock;
  }

  /** Closes every idle connection to a database and retires the busy ones (they close when returned). */
  retire(path: string): void {
    const entry = this.entries.get(path);
    if (!entry) return;
    for (const conn of entry.idle.splice(0)) this.closeConnection(conn);
    if (entry.inUse === 0) this.entries.delete(path);
    else entry.retired = true;
    const lock = this.locks.get(path);
    if (lock?.idle) this.locks.delete(path);
  }

  /** Closes every idle connection and waits until they are really closed (shutdown). */
  async closeAll(): Promise<void> {
    for (const path of [...this.entries.keys()]) this.retire(path);
    await flushClosing();
  }

  stats(): PoolStats {
    let idle = 0;
    let inUse = 0;
    for (const e of this.entries.values()) {
      idle += e.idle.length;
      inUse += e.inUse;
    }
    return { open: this.open, idle, inUse, databases: this.entries.size };
  }

  /** The most recent idle connection opened with `key`; idle ones opened with another close. */
  private takeIdle(entry: Entry, key: DatabaseKey | undefined): EngineConnection | undefined {
    for (let conn = entry.idle.pop(); conn; conn = entry.idle.pop()) {
      if (this.keyChecks.get(conn) === key?.check) return conn;
      this.closeConnection(conn);
    }
    return undefined;
  }

  private connect(path: string, key?: DatabaseKey): EngineConnection {
    if (!existsSync(path)) throw new MissingFileError();
    const db = new Database(path, { fileMustExist: true, ...keyOptions(key) });
    try {
      db.exec("PRAGMA journal_mode = WAL");
      db.exec(`PRAGMA synchronous = ${this.opts.synchronous}`);
      // Writers wait on WriteLock, asynchronously; a SQLite busy-wait would block the event loop.
      // The short timeout only covers writers outside this pool (maintenance, replication).
      db.exec("PRAGMA busy_timeout = 50");
      // Only the frame log checkpoints: each checkpoint ends a replication generation.
      db.exec("PRAGMA wal_autocheckpoint = 0");
      const conn = new EngineConnection(path, db, this.limits);
      if (key) this.keyChecks.set(conn, key.check);
      return conn;
    } catch (e) {
      db.close();
      // The first read is where the engine notices a missing or wrong key.
      throw keyFailure(e, path, key !== undefined) ?? e;
    }
  }

  private evictBeyondLimit(): void {
    const keep = Math.min(this.opts.maxOpen, this.hardLimit);
    if (this.open > keep) this.closeIdle(this.open - keep);
  }

  /** Closes up to `n` idle connections, least recently used databases first. */
  private closeIdle(n: number): void {
    let left = n;
    for (const [path, entry] of this.entries) {
      while (entry.idle.length > 0 && left > 0) {
        this.closeConnection(entry.idle.shift()!);
        left--;
      }
      if (entry.idle.length === 0 && entry.inUse === 0) {
        this.entries.delete(path);
        if (this.locks.get(path)?.idle) this.locks.delete(path);
      }
      if (left <= 0) break;
    }
  }

  private closeConnection(conn: EngineConnection): void {
    if (conn.isClosed) return;
    const entry = this.entries.get(conn.path);
    const last = !entry || (entry.idle.length === 0 && entry.inUse === 0);
    if (!last) entry.parked++;
    if (last && this.opts.beforeLastClose) {
      try {
        this.opts.beforeLastClose(conn);
      } catch {
        // The generation simply goes on in the WAL; the next open picks it up.
      }
    }
    conn.close();
    this.open--;
  }
}
