import { existsSync } from "node:fs";
import Database from "libsql";
import { readOnlyFile } from "../lib/read-only-file.js";
import { EngineConnection } from "./connection.js";
import { connectionBudget, descriptorsNearlyUsed } from "./descriptors.js";
import type { DatabaseKey } from "./encryption/keys.js";
import { keyFailure, keyOptions } from "./encryption/open.js";
import { defaultLimits, type ExecutionLimits } from "./execute.js";
import { flushClosing } from "./handle-release.js";
import type { HostedDatabase } from "./hosted-database.js";
import {
  ConnectionsExhaustedError,
  isSqliteFailure,
  MissingFileError,
  primaryCode,
} from "./sqlite-errors.js";

export interface PoolOptions {
  /**
   * Called with a database's last open connection just before it closes (SQLite would checkpoint
   * on that close; the frame log makes the checkpoint itself, as a generation boundary).
   */
  beforeLastClose?: (db: HostedDatabase, conn: EngineConnection) => void;
  /**
   * Called with a database's first connection in this process before anything runs on it; may
   * throw to refuse the connection (it is closed).
   */
  afterFirstOpen?: (db: HostedDatabase, conn: EngineConnection) => void;
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
 * Opens an encrypted database read-only with `key` and reads its header, before a connection
 * that may write is opened with it. A connection opened with a wrong key reads garbage, and as a
 * file's last connection it would checkpoint its WAL on closing, writing that garbage over the
 * database; a read-only connection never checkpoints. The request's key was already checked
 * against the database's check value (`unlockDatabase`); this holds even if a wrong one got by.
 */
function proveKey(path: string, key: DatabaseKey): void {
  const probe = new Database(readOnlyFile(path), keyOptions(key));
  try {
    probe.prepare("PRAGMA schema_version").raw(true).get();
  } catch (e) {
    throw keyFailure(e, path, true) ?? e;
  } finally {
    probe.close();
  }
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

/**
 * Open connections to hosted database files, within one budget for the node. Opening is lazy (a
 * database costs nothing until a request reaches it) and the number of open connections is bounded,
 * so a node holding many mostly idle databases spends memory and descriptors on the busy ones only.
 * A connection in use is never closed under its stream; the bound can be exceeded while every
 * connection is busy. Each database's own connections live on its HostedDatabase.
 */
export class ConnectionPool {
  /** Databases with a connection open or in use; insertion order is recency (the first is the least recently used). */
  private readonly active = new Set<HostedDatabase>();
  /** The key check each connection of an encrypted database was opened with. */
  private readonly keyChecks = new WeakMap<EngineConnection, string>();
  /** When each connection opened, in the pool's sequence: those opened before a retirement close when returned. */
  private readonly openedAt = new WeakMap<EngineConnection, number>();
  private sequence = 0;
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
   * A connection to `db`, opened if no idle one is available; `key` for an encrypted database
   * (only a connection opened with the same key is handed out). At the hard limit (or when the
   * process runs out of descriptors) idle connections of other databases close first; only when
   * every connection is busy is the request refused, with ConnectionsExhaustedError.
   */
  checkout(db: HostedDatabase, key?: DatabaseKey): EngineConnection {
    this.touch(db);
    db.conns.inUse++;
    const conn = this.takeIdle(db, key);
    if (conn) return conn;
    try {
      if (this.open >= this.hardLimit) this.closeIdle(this.open - this.hardLimit + 1);
      if (this.open >= this.hardLimit) throw new ConnectionsExhaustedError(this.hardLimit);
      const opened = this.connectWithin(db, key);
      db.conns.open++;
      this.openedAt.set(opened, ++this.sequence);
      this.open++;
      this.evictBeyondLimit();
      return opened;
    } catch (e) {
      db.conns.inUse--;
      this.settle(db);
      throw e;
    }
  }

  /** Opens a connection; when the process is out of descriptors, closes idle ones and tries once more. */
  private connectWithin(db: HostedDatabase, key: DatabaseKey | undefined): EngineConnection {
    try {
      return this.connect(db, key);
    } catch (e) {
      if (!isSqliteFailure(e) || primaryCode(e) !== "SQLITE_CANTOPEN" || !descriptorsNearlyUsed()) throw e;
      this.closeIdle(Number.POSITIVE_INFINITY);
    }
    try {
      return this.connect(db, key);
    } catch (e) {
      if (isSqliteFailure(e) && primaryCode(e) === "SQLITE_CANTOPEN" && descriptorsNearlyUsed())
        throw new ConnectionsExhaustedError(this.hardLimit);
      throw e;
    }
  }

  /** Returns a connection of `db`. One left inside a transaction is rolled back first. */
  checkin(db: HostedDatabase, conn: EngineConnection, attached: readonly string[] = []): void {
    db.conns.inUse--;
    if (!conn.isClosed && conn.inTransaction) {
      try {
        conn.exec("ROLLBACK");
      } catch {
        this.closeConnection(db, conn);
      }
    }
    // Databases a caller attached must not stay visible to the next caller of this connection,
    // whose token may not grant them: detach them, or close the connection if that fails.
    for (const alias of attached) {
      if (conn.isClosed) break;
      try {
        conn.exec(`DETACH ${alias}`);
      } catch {
        this.closeConnection(db, conn);
      }
    }
    // A PRAGMA a caller set (foreign_keys, ignore_check_constraints, ...) would hold for the next
    // caller, whose token may be another's: such a connection isn't reused.
    if (
      !conn.isClosed &&
      (conn.settingsChanged || db.removed || (this.openedAt.get(conn) ?? 0) <= db.conns.retiredAt)
    )
      this.closeConnection(db, conn);
    if (conn.isClosed) {
      this.settle(db);
      return;
    }
    db.conns.idle.push(conn);
    this.evictBeyondLimit();
    // SQLite keeps the descriptor of a connection closed while others to the same file stay open
    // (POSIX locks belong to the process, so closing it could drop theirs) until the last one
    // closes. Once none is in use, the idle ones close too: a burst of connections to one
    // database (a client opening streams without end) leaves no descriptors behind.
    if (db.conns.inUse === 0 && db.conns.parked > 0) {
      for (const idle of db.conns.idle.splice(0)) this.closeConnection(db, idle);
      db.conns.parked = 0;
      this.settle(db);
    }
  }

  /** See HostedDatabase.hold. */
  hold(db: HostedDatabase): () => void {
    this.touch(db);
    db.conns.inUse++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      db.conns.inUse--;
      this.settle(db);
    };
  }

  /** Closes every idle connection to `db`; connections in use now close when returned. */
  retire(db: HostedDatabase): void {
    db.conns.retiredAt = this.sequence;
    for (const conn of db.conns.idle.splice(0)) this.closeConnection(db, conn);
    this.settle(db);
  }

  /** Closes every idle connection and waits until they are really closed (shutdown). */
  async closeAll(): Promise<void> {
    for (const db of [...this.active]) this.retire(db);
    await flushClosing();
  }

  stats(): PoolStats {
    let idle = 0;
    let inUse = 0;
    for (const db of this.active) {
      idle += db.conns.idle.length;
      inUse += db.conns.inUse;
    }
    return { open: this.open, idle, inUse, databases: this.active.size };
  }

  /** Marks `db` the most recently used. */
  private touch(db: HostedDatabase): void {
    this.active.delete(db);
    this.active.add(db);
  }

  /** Stops tracking `db` once it has nothing open and nothing in use. */
  private settle(db: HostedDatabase): void {
    if (db.conns.inUse === 0 && db.conns.idle.length === 0) {
      this.active.delete(db);
      db.conns.parked = 0;
    }
  }

  /** The most recent idle connection opened with `key`; idle ones opened with another close. */
  private takeIdle(db: HostedDatabase, key: DatabaseKey | undefined): EngineConnection | undefined {
    for (let conn = db.conns.idle.pop(); conn; conn = db.conns.idle.pop()) {
      if (this.keyChecks.get(conn) === key?.check) return conn;
      this.closeConnection(db, conn);
    }
    return undefined;
  }

  private connect(hosted: HostedDatabase, key?: DatabaseKey): EngineConnection {
    const path = hosted.path;
    if (!existsSync(path)) throw new MissingFileError();
    if (key) proveKey(path, key);
    const db = new Database(path, { fileMustExist: true, ...keyOptions(key) });
    let conn: EngineConnection | undefined;
    try {
      db.exec("PRAGMA journal_mode = WAL");
      db.exec(`PRAGMA synchronous = ${this.opts.synchronous}`);
      // Writers wait on WriteLock, asynchronously; a SQLite busy-wait would block the event loop.
      // The short timeout only covers writers outside this pool (maintenance, replication).
      db.exec("PRAGMA busy_timeout = 50");
      // Only the frame log checkpoints: each checkpoint ends a replication generation.
      db.exec("PRAGMA wal_autocheckpoint = 0");
      conn = new EngineConnection(path, db, this.limits, hosted.schemaEpoch);
      if (key) this.keyChecks.set(conn, key.check);
      if (hosted.conns.open === 0) this.opts.afterFirstOpen?.(hosted, conn);
      return conn;
    } catch (e) {
      if (conn) conn.close();
      else db.close();
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
    for (const db of [...this.active]) {
      while (db.conns.idle.length > 0 && left > 0) {
        this.closeConnection(db, db.conns.idle.shift()!);
        left--;
      }
      this.settle(db);
      if (left <= 0) break;
    }
  }

  private closeConnection(db: HostedDatabase, conn: EngineConnection): void {
    if (conn.isClosed) return;
    const last = db.conns.idle.length === 0 && db.conns.inUse === 0;
    if (!last) db.conns.parked++;
    if (last && this.opts.beforeLastClose) {
      try {
        this.opts.beforeLastClose(db, conn);
      } catch {
        // The generation simply goes on in the WAL; the next open picks it up.
      }
    }
    conn.close();
    db.conns.open--;
    this.open--;
  }
}
