import { parseSizeLimit } from "../../domain/core/names.js";
import type { DataAccess } from "../../domain/data-access/open.js";
import type { EngineConnection, ExecResult, Prepared, SqlArgs } from "../../engine/connection.js";
import type { FrameLogs } from "../../engine/frame-logs.js";
import { sweepDue, sweepStatements } from "../../engine/handle-release.js";
import type { ConnectionPool } from "../../engine/pool.js";
import { splitStatements } from "../../engine/sql-lexer.js";
import type { UsageMeter } from "../../hosting/usage-meter.js";
import { isSchemaChange, refuseOnFollower } from "../schema-changes.js";
import {
  type AttachTarget,
  attachStatement,
  authorizeStatement,
  refuseForbidden,
  type Verdict,
} from "./authorize.js";
import { HranaError, ProtocolError, toHranaError } from "./errors.js";
import { argsOf, type Batch, type Condition, type Stmt } from "./requests.js";
import { withoutServerPaths } from "./server-paths.js";
import type { SqlStore } from "./sql-store.js";

export interface StreamLimits {
  /** An interactive write transaction is rolled back after this long. */
  txnTimeoutMs: number;
  /** How long a writer waits for another stream's write transaction. */
  lockWaitMs: number;
}

export interface StreamServices {
  pool: ConnectionPool;
  /** Told about every write transaction that ends, for replication. */
  frameLogs: FrameLogs;
  meter: UsageMeter;
  limits: StreamLimits;
  /** Resolves an `ATTACH` target: a database of the same organization, by name. */
  resolveAttach(access: DataAccess, name: string): Promise<AttachTarget | undefined>;
  /** Whether this node may write to the database's primary now (its lease; see hosting/primary-leases.ts). */
  fence?: {
    mayWrite(database: DataAccess["database"]): boolean;
    /** Renews the leases; throws when this node still may not write. */
    acquire(database: DataAccess["database"]): Promise<void>;
  };
  /** Told, on the committing connection, about each committed transaction of a schema database that ran DDL. */
  schemaChanged?(access: DataAccess, conn: EngineConnection, statements: string[]): void;
}

export interface DescribeResult {
  params: Array<{ name: string | null }>;
  cols: Array<{ name: string; decltype: string | null }>;
  is_explain: boolean;
  is_readonly: boolean;
}

export interface BatchOutcome {
  results: Array<ExecResult | null>;
  errors: Array<HranaError | null>;
}

/** What a transport needs from a stream, wherever its statements run. */
export interface SqlStream {
  access: DataAccess;
  readonly sqls: SqlStore;
  readonly isClosed: boolean;
  execute(stmt: Stmt): ExecResult | Promise<ExecResult>;
  batch(batch: Batch): Promise<BatchOutcome>;
  sequence(ref: { sql?: string; sqlId?: number }): Promise<void>;
  describe(ref: { sql?: string; sqlId?: number }): DescribeResult;
  isAutocommit(): boolean;
  close(): void;
}

/**
 * A Hrana stream: one SQLite connection held for the stream's life, so an interactive transaction
 * spans requests. It takes the database's write lock before its first write and keeps it until the
 * connection is back in autocommit. Like sqld, a write transaction that has held the lock longer
 * than the limit is rolled back as soon as another writer waits for it, so an abandoned client
 * can't stall the database; the stream's next request then fails with TRANSACTION_TIMEOUT.
 */
export class HranaStream implements SqlStream {
  private conn: EngineConnection | undefined;
  private holdsLock = false;
  private lockedAt = 0;
  private txnTimer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private closed = false;
  /** DDL of the open transaction on a schema database, passed on once it commits. */
  private ddl: string[] = [];
  /** Aliases this stream attached on its connection: detached before the connection is reused. */
  private attached: string[] = [];
  /** Savepoints of the open transaction, with how many schema changes preceded each. */
  private savepoints: Array<{ name: string; ddl: number }> = [];

  constructor(
    public access: DataAccess,
    readonly sqls: SqlStore,
    private readonly services: StreamServices,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  isAutocommit(): boolean {
    return !this.conn?.inTransaction;
  }

  /** Runs one statement; synchronously unless it must wait for the write lock or resolve an ATTACH. */
  execute(stmt: Stmt): ExecResult | Promise<ExecResult> {
    this.reportTimeout();
    return this.run(this.sqlOf(stmt), argsOf(stmt), stmt.wantRows);
  }

  async batch(batch: Batch): Promise<BatchOutcome> {
    const results: Array<ExecResult | null> = [];
    const errors: Array<HranaError | null> = [];
    if (this.timedOut) {
      // Every step of the first program after a forced rollback reports it, as in sqld.
      this.timedOut = false;
      for (const _ of batch.steps) {
        results.push(null);
        errors.push(this.timeoutError());
      }
      return { results, errors };
    }
    for (const step of batch.steps) {
      if (step.condition && !this.holds(step.condition, results, errors)) {
        results.push(null);
        errors.push(null);
        continue;
      }
      try {
        const r = this.execute(step.stmt);
        results.push(r instanceof Promise ? await r : r);
        errors.push(null);
      } catch (e) {
        results.push(null);
        errors.push(toHranaError(e));
      }
    }
    return { results, errors };
  }

  /** Runs every statement of a text in order, discarding rows; stops at the first error. */
  async sequence(ref: { sql?: string; sqlId?: number }): Promise<void> {
    this.reportTimeout();
    const text = this.sqlOf(ref);
    for (const s of splitStatements(text)) {
      const r = this.run(s.sql, [], false);
      if (r instanceof Promise) await r;
    }
  }

  describe(ref: { sql?: string; sqlId?: number }): DescribeResult {
    const p = this.prepare(this.sqlOf(ref));
    return {
      params: p.params.map((name) => ({ name })),
      cols: p.columns.map((c) => ({ name: c.name, decltype: c.decltype })),
      is_explain: p.info.isExplain,
      is_readonly: p.readonly,
    };
  }

  /** Ends the stream: an open transaction is rolled back and the connection goes back to the pool. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.ddl = [];
    this.endTransactionTimer();
    if (this.conn) {
      this.services.pool.checkin(this.conn, this.attached);
      this.conn = undefined;
    }
    this.attached = [];
    this.releaseLock();
  }

  private run(sql: string, args: SqlArgs, wantRows: boolean): ExecResult | Promise<ExecResult> {
    if (this.closed) throw new ProtocolError("Stream for this baton was closed");
    // Statements dropped by prepares wait for the garbage collector (see handle-release.ts).
    if (sweepDue()) return sweepStatements().then(() => this.run(sql, args, wantRows));
    const conn = this.connection();
    let p = this.prepare(sql);
    let verdict: Verdict;
    try {
      verdict = authorizeStatement(p, this.access);
    } catch (e) {
      throw toHranaError(e, "prepare");
    }
    refuseOnFollower(this.access.database, p.info.sql);
    if (p.scans && sweepDue(true)) return sweepStatements().then(() => this.run(sql, args, wantRows));
    if (verdict !== undefined) {
      if ("attach" in verdict) return this.attachThenRun(verdict, args, wantRows);
      p = this.prepare(verdict.sql);
    }
    // Fencing: every write, and the commit that makes writes durable, needs the primary's lease.
    const fence = this.services.fence;
    if (
      fence &&
      (!p.readonly || (p.info.kind === "commit" && this.holdsLock)) &&
      !fence.mayWrite(this.access.database)
    )
      return fence.acquire(this.access.database).then(() => this.run(sql, args, wantRows));
    // Once the lock is held, prepare again: another stream may have changed the schema meanwhile.
    if (!p.readonly && !this.holdsLock) return this.takeLock().then(() => this.run(sql, args, wantRows));
    return this.exec(conn, p, args, wantRows);
  }

  private async attachThenRun(
    verdict: { attach: string; alias: string },
    args: SqlArgs,
    wantRows: boolean,
  ): Promise<ExecResult> {
    const access = this.access;
    let sql: string;
    try {
      sql = await attachStatement(verdict.attach, verdict.alias, access, (name) =>
        this.services.resolveAttach(access, name),
      );
    } catch (e) {
      throw toHranaError(e, "prepare");
    }
    if (this.closed) throw new ProtocolError("Stream for this baton was closed");
    const result = this.exec(this.connection(), this.prepare(sql), args, wantRows);
    this.attached.push(verdict.alias);
    return result;
  }

  private exec(conn: EngineConnection, p: Prepared, args: SqlArgs, wantRows: boolean): ExecResult {
    let committed = false;
    try {
      const result = withoutServerPaths(p.info.sql, conn.execute(p, args, wantRows));
      if (this.access.database.is_schema === 1) this.trackSchemaChange(p.info.sql);
      committed = p.info.kind !== "rollback";
      const db = this.access.database;
      this.services.meter.record(
        { id: db.id, orgId: db.org_id, location: db.primary_location },
        p.info.sql,
        result.rowsRead,
        result.rowsWritten,
        result.durationMs,
      );
      return result;
    } catch (e) {
      throw toHranaError(e);
    } finally {
      this.afterStatement(conn, committed);
    }
  }

  private prepare(sql: string): Prepared {
    try {
      // Checked on the statement itself before SQLite compiles it (see refuseForbidden).
      return this.connection().prepare(sql, refuseForbidden);
    } catch (e) {
      throw toHranaError(e, "prepare");
    }
  }

  /** The stream's connection, with the caller's current rights applied at the SQLite level too. */
  private connection(): EngineConnection {
    try {
      this.conn ??= this.services.pool.checkout(this.access.path);
    } catch (e) {
      // Opening the file failed (damaged, missing): the client hears SQLite's code, not a 500.
      throw toHranaError(e);
    }
    const db = this.access.database;
    this.conn.configure({
      queryOnly: !this.access.canWrite || db.block_writes === 1 || db.org_blocked_writes === 1,
      maxPageCount: db.size_limit ? Math.floor(parseSizeLimit(db.size_limit) / 4096) : 0,
    });
    return this.conn;
  }

  private async takeLock(): Promise<void> {
    const lock = this.services.pool.writeLock(this.access.path);
    try {
      await lock.acquire(this, this.services.limits.lockWaitMs, () => this.onContention());
    } catch (e) {
      throw toHranaError(e);
    }
    // Closed while waiting (its WebSocket went away): its connection is back in the pool, so
    // nothing may run on it, and the lock must go to the next writer rather than stay held.
    if (this.closed) {
      lock.release(this);
      throw new ProtocolError("Stream for this baton was closed");
    }
    this.holdsLock = true;
    this.lockedAt = performance.now();
  }

  /** Another writer waits: give way once this stream has held the lock for the time limit. */
  private onContention(): void {
    if (this.txnTimer || !this.conn?.inTransaction) return;
    const remaining = this.services.limits.txnTimeoutMs - (performance.now() - this.lockedAt);
    this.txnTimer = setTimeout(() => this.timeOutTransaction(), Math.max(0, remaining));
    this.txnTimer.unref();
  }

  /**
   * Records a schema change of a schema database for its followers, minding savepoints: a change
   * undone by ROLLBACK TO must not reach them (it would fail its check on every child).
   */
  private trackSchemaChange(sql: string): void {
    const savepoint = /^savepoint\s+("?)([^";\s]+)\1/i.exec(sql);
    if (savepoint) {
      this.savepoints.push({ name: savepoint[2]!.toLowerCase(), ddl: this.ddl.length });
      return;
    }
    const undo = /^rollback(?:\s+transaction)?\s+to\s+(?:savepoint\s+)?("?)([^";\s]+)\1/i.exec(sql);
    const release = /^release\s+(?:savepoint\s+)?("?)([^";\s]+)\1/i.exec(sql);
    const named = (undo ?? release)?.[2]?.toLowerCase();
    if (named !== undefined) {
      const at = this.savepoints.map((s) => s.name).lastIndexOf(named);
      if (at < 0) return;
      if (undo) {
        this.ddl.length = this.savepoints[at]!.ddl;
        this.savepoints.length = at + 1;
      } else {
        this.savepoints.length = at;
      }
      return;
    }
    if (isSchemaChange(sql)) this.ddl.push(sql);
  }

  private releaseLock(): void {
    if (!this.holdsLock) return;
    this.holdsLock = false;
    this.services.pool.writeLock(this.access.path).release(this);
  }

  /** `committed`: the statement succeeded and was no ROLLBACK, so a transaction it ended committed. */
  private afterStatement(conn: EngineConnection, committed: boolean): void {
    if (conn.inTransaction) return;
    this.endTransactionTimer();
    // Still holding the write lock: no other writer can commit before the frames are recorded.
    if (this.holdsLock) this.services.frameLogs.afterWrite(conn);
    this.savepoints = [];
    if (this.ddl.length > 0) {
      const statements = this.ddl;
      this.ddl = [];
      if (committed) this.services.schemaChanged?.(this.access, conn, statements);
    }
    this.releaseLock();
  }

  private timeOutTransaction(): void {
    this.txnTimer = undefined;
    this.ddl = [];
    if (this.holdsLock && this.conn?.inTransaction) {
      try {
        this.conn.exec("ROLLBACK");
      } catch {
        // The connection is unusable; closing the stream below returns nothing to the pool.
      }
      this.timedOut = true;
    }
    this.releaseLock();
  }

  private endTransactionTimer(): void {
    if (this.txnTimer) clearTimeout(this.txnTimer);
    this.txnTimer = undefined;
  }

  private reportTimeout(): void {
    if (!this.timedOut) return;
    this.timedOut = false;
    throw this.timeoutError();
  }

  private timeoutError(): HranaError {
    return new HranaError("TRANSACTION_TIMEOUT", "Transaction timed out");
  }

  sqlOf(ref: { sql?: string; sqlId?: number }): string {
    if (ref.sql !== undefined) return ref.sql;
    const sql = this.sqls.get(ref.sqlId!);
    if (sql === undefined) throw new ProtocolError(`SQL text ${ref.sqlId} not found`);
    return sql;
  }

  private holds(c: Condition, results: Array<ExecResult | null>, errors: Array<HranaError | null>): boolean {
    switch (c.type) {
      case "ok":
        return results[c.step] != null;
      case "error":
        return errors[c.step] != null;
      case "not":
        return !this.holds(c.cond, results, errors);
      case "and":
        return c.conds.every((x) => this.holds(x, results, errors));
      case "or":
        return c.conds.some((x) => this.holds(x, results, errors));
      case "is_autocommit":
        return this.isAutocommit();
    }
  }
}
