import { setImmediate as yieldToLoop } from "node:timers/promises";
import { parseSizeLimit } from "../../domain/core/names.js";
import type { DataAccess } from "../../domain/data-access/open.js";
import type {
  EngineConnection,
  ExecOptions,
  ExecResult,
  Prepared,
  RowBudget,
  SqlArgs,
} from "../../engine/connection.js";
import type { HostedDatabase } from "../../engine/hosted-database.js";
import { splitStatements, writesBySyntax } from "../../engine/sql-lexer.js";
import { refuseOnFollower } from "../schema-changes.js";
import { meterStatement } from "./after-statement.js";
import { attachStatement, authorizeRun, compileGuard, type Verdict } from "./authorize.js";
import { type BatchOutcome, everyStepFailed, runSteps, SLICE_MS } from "./batch-steps.js";
import { refuseAtReserve } from "./disk-reserve.js";
import { HranaError, ProtocolError, toHranaError } from "./errors.js";
import { confirmedCommit, fenceFor } from "./fence.js";
import { argsOf, type Batch, type Stmt } from "./requests.js";
import { SchemaChangeLog } from "./schema-change-log.js";
import { withoutServerPaths } from "./server-paths.js";
import type { SqlStore } from "./sql-store.js";
import { type DescribeResult, describePrepared, type SqlStream } from "./sql-stream.js";
import { takeStream } from "./stream-limits.js";
import type { AfterStatementStep, StreamServices } from "./stream-services.js";

export type { BatchOutcome } from "./batch-steps.js";
export type { DescribeResult, SqlStream } from "./sql-stream.js";
export type { StreamLimits, StreamServices } from "./stream-services.js";
/**
 * A Hrana stream: one SQLite connection held for the stream's life, so an interactive transaction
 * spans requests. It takes the database's write lock before its first write and keeps it until the
 * connection is back in autocommit. Like sqld, a write transaction that has held the lock longer
 * than the limit is rolled back as soon as another writer waits for it, so an abandoned client
 * can't stall the database; the stream's next request then fails with TRANSACTION_TIMEOUT.
 */
export class HranaStream implements SqlStream {
  /** The database's runtime on this node: the connection comes from it and goes back to it. */
  private readonly db: HostedDatabase;
  private conn: EngineConnection | undefined;
  private holdsLock = false;
  private lockedAt = 0;
  private txnTimer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private closed = false;
  private readonly schemaChanges = new SchemaChangeLog();
  /** Aliases this stream attached on its connection: detached before the connection is reused. */
  private attached: string[] = [];
  /** Set while a statement runs off the event loop: the connection can't be returned or rolled back meanwhile. */
  private running = false;
  /** The transaction timed out while a statement ran: rolled back once it ends. */
  private timeoutDue = false;

  /** Throws STREAMS_TOO_MANY when the database already has as many streams as it may. */
  constructor(
    public access: DataAccess,
    readonly sqls: SqlStore,
    private readonly services: StreamServices,
  ) {
    this.db = services.hosted.at(access.path);
    takeStream(this.db, services.maxStreamsPerDatabase, access.database.name);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  isAutocommit(): boolean {
    return !this.conn?.inTransaction;
  }

  /**
   * Runs one statement; synchronously unless it must wait for the write lock, resolve an ATTACH,
   * or run off the event loop (a statement whose work isn't bounded, see statement-program.ts).
   */
  execute(stmt: Stmt, budget?: RowBudget): ExecResult | Promise<ExecResult> {
    this.reportTimeout();
    return this.run(this.sqlOf(stmt), argsOf(stmt), { wantRows: stmt.wantRows, budget });
  }

  async batch(batch: Batch, budget?: RowBudget): Promise<BatchOutcome> {
    if (this.timedOut) {
      // Every step of the first program after a forced rollback reports it, as in sqld.
      this.timedOut = false;
      return everyStepFailed(batch, () => this.timeoutError());
    }
    return runSteps(batch, {
      execute: (stmt) => this.execute(stmt, budget),
      isAutocommit: () => this.isAutocommit(),
    });
  }

  /** Runs every statement of a text in order, discarding rows; stops at the first error. */
  async sequence(ref: { sql?: string; sqlId?: number }): Promise<void> {
    this.reportTimeout();
    const text = this.sqlOf(ref);
    let slice = performance.now();
    for (const s of splitStatements(text)) {
      if (performance.now() - slice > SLICE_MS) {
        await yieldToLoop();
        slice = performance.now();
      }
      const r = this.run(s.sql, [], { wantRows: false });
      if (r instanceof Promise) await r;
    }
  }

  describe(ref: { sql?: string; sqlId?: number }): DescribeResult {
    return describePrepared(this.prepare(this.sqlOf(ref)));
  }

  /**
   * Ends the stream: an open transaction is rolled back and the connection goes back to the pool.
   * A statement running off the event loop is interrupted first, and the rest waits for it to stop.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.releaseStream();
    if (this.running) {
      this.conn?.cancel();
      return;
    }
    this.finishClose();
  }

  private finishClose(): void {
    this.schemaChanges.take();
    this.endTransactionTimer();
    if (this.conn) {
      this.db.checkin(this.conn, this.attached);
      this.conn = undefined;
    }
    this.attached = [];
    this.releaseLock();
  }

  /** `swept`: a sweep ran just before (once per statement, whatever it left). */
  private run(
    sql: string,
    args: SqlArgs,
    opts: ExecOptions,
    swept = false,
  ): ExecResult | Promise<ExecResult> {
    if (this.closed) throw new ProtocolError("Stream for this baton was closed");
    const conn = this.connection();
    // Let-go statements wait for the garbage collector (see handle-release.ts). In a transaction a
    // write takes the lock before it is prepared: preparing may read the schema version, starting a
    // snapshot another stream's commit then makes stale (SQLITE_BUSY_SNAPSHOT instead of a wait).
    if (!swept && conn.sweepDue(false)) return conn.sweep().then(() => this.run(sql, args, opts, true));
    const lockFirst = !this.holdsLock && conn.inTransaction && this.access.canWrite && writesBySyntax(sql);
    if (lockFirst && !this.tryTakeLock()) return this.takeLock().then(() => this.run(sql, args, opts, swept));
    let p = this.prepare(sql);
    let verdict: Verdict;
    try {
      verdict = authorizeRun(p, this.access, conn);
    } catch (e) {
      throw toHranaError(e, "prepare");
    }
    refuseOnFollower(this.access.database, p.info.sql);
    if (!p.readonly && this.services.disk) refuseAtReserve(this.services.disk, p.info.sql);
    if (!swept && p.scans && conn.sweepDue(true))
      return conn.sweep().then(() => this.run(sql, args, opts, true));
    if (verdict !== undefined) {
      if ("attach" in verdict) return this.attachThenRun(verdict, args, opts);
      p = this.prepare(verdict.sql);
    }
    const fenced = fenceFor(this.services, this.access.database, p, this.holdsLock);
    if (fenced) return fenced.then(() => this.run(sql, args, opts));
    if (!p.readonly && !this.holdsLock) {
      // Free: taken at once, and nothing ran since the statement was prepared.
      if (this.tryTakeLock()) return this.exec(conn, p, args, opts);
      // Once a wait got the lock, prepare again: another stream may have changed the schema meanwhile.
      return this.takeLock().then(() => this.run(sql, args, opts));
    }
    return this.exec(conn, p, args, opts);
  }

  private async attachThenRun(
    verdict: { attach: string; alias: string },
    args: SqlArgs,
    opts: ExecOptions,
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
    const result = await this.exec(this.connection(), this.prepare(sql), args, opts);
    this.attached.push(verdict.alias);
    return result;
  }

  private exec(
    conn: EngineConnection,
    p: Prepared,
    args: SqlArgs,
    opts: ExecOptions,
  ): ExecResult | Promise<ExecResult> {
    let ran: ExecResult | Promise<ExecResult>;
    try {
      ran = conn.execute(p, args, this.access.rights ? { ...opts, checkedProgram: true } : opts);
    } catch (e) {
      this.afterStatement(conn, false);
      throw toHranaError(e);
    }
    return ran instanceof Promise ? this.settle(conn, p, ran) : this.finish(conn, p, ran);
  }

  /** Waits for a statement running off the event loop, then does what a closing or timeout had to leave. */
  private async settle(conn: EngineConnection, p: Prepared, ran: Promise<ExecResult>): Promise<ExecResult> {
    this.running = true;
    let r: ExecResult;
    try {
      r = await ran;
    } catch (e) {
      this.running = false;
      this.afterStatement(conn, false);
      this.afterRunning();
      throw toHranaError(e);
    }
    this.running = false;
    try {
      return this.finish(conn, p, r);
    } finally {
      this.afterRunning();
    }
  }

  private afterRunning(): void {
    if (this.timeoutDue) {
      this.timeoutDue = false;
      this.timeOutTransaction();
    }
    if (this.closed) this.finishClose();
  }

  /**
   * The statement ran (and, outside a transaction, committed): from here on nothing may turn it
   * into an error answer. Counting it, recording the commit and journaling a schema change may
   * fail (a full disk); each failure is logged and counted (`afterCommitFailed`), and the client
   * gets the statement's result.
   */
  private finish(conn: EngineConnection, p: Prepared, r: ExecResult): ExecResult | Promise<ExecResult> {
    const db = this.access.database;
    const wrote = this.holdsLock && p.info.kind !== "rollback";
    let result: ExecResult;
    try {
      // Only a PRAGMA's rows change (it commits nothing): a failure there may still fail it.
      result = withoutServerPaths(p.info.sql, r);
      if (db.is_schema === 1) this.aftercare("schema-journal", () => this.schemaChanges.track(p.info.sql));
      meterStatement(this.services, db, p.info.sql, result);
    } finally {
      this.afterStatement(conn, p.info.kind !== "rollback");
    }
    return wrote && !conn.inTransaction ? confirmedCommit(this.services, this.db, db, result) : result;
  }

  /** Runs a step that follows a statement which ran; its failure is reported, never thrown. */
  private aftercare(step: AfterStatementStep, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.services.afterCommitFailed(step, this.access.database.id, e);
    }
  }

  private prepare(sql: string): Prepared {
    try {
      // Checked on the statement itself before SQLite compiles it (see refuseForbidden).
      return this.connection().prepare(sql, compileGuard(this.access));
    } catch (e) {
      throw toHranaError(e, "prepare");
    }
  }

  /** The stream's connection, with the caller's current rights applied at the SQLite level too. */
  private connection(): EngineConnection {
    try {
      this.conn ??= this.db.checkout(this.access.key);
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

  private tryTakeLock(): boolean {
    if (!this.db.writeLock.tryAcquire(this, () => this.onContention())) return false;
    this.holdsLock = true;
    this.lockedAt = performance.now();
    return true;
  }

  private async takeLock(): Promise<void> {
    const lock = this.db.writeLock;
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

  private releaseLock(): void {
    if (!this.holdsLock) return;
    this.holdsLock = false;
    this.db.writeLock.release(this);
  }

  /** `committed`: the statement succeeded and was no ROLLBACK, so a transaction it ended committed. */
  private afterStatement(conn: EngineConnection, committed: boolean): void {
    if (conn.inTransaction) return;
    this.endTransactionTimer();
    try {
      // Still holding the write lock: no other writer can commit before the frames are recorded.
      // (afterWrite never throws: the engine reports its own failures, see HostedDatabases.)
      if (this.holdsLock) {
        this.db.followed = this.access.database.locations.length > 1;
        this.db.afterWrite(conn);
      }
      const statements = this.schemaChanges.take();
      if (statements.length > 0 && committed)
        this.aftercare("schema-journal", () => this.services.schemaChanged?.(this.access, conn, statements));
    } finally {
      this.releaseLock();
    }
  }

  private timeOutTransaction(): void {
    this.txnTimer = undefined;
    if (this.running) {
      // The statement has its own time limit; the rollback follows as soon as it ends.
      this.timeoutDue = true;
      return;
    }
    this.schemaChanges.take();
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
}
