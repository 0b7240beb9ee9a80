import type Database from "libsql";
import { bindArguments } from "./bind.js";
import { interrupt } from "./driver.js";
import {
  type ExecutionLimits,
  exactRowid,
  type Ran,
  type RowBudget,
  resetExplain,
  runBounded,
  runUnbounded,
} from "./execute.js";
import { closeWhenUnreferenced, sweepStatements } from "./handle-release.js";
import type { Column, Prepared } from "./prepared.js";
import { noteRunning } from "./running-database.js";
import { mayChangeSchema, SchemaEpoch, SchemaFollower } from "./schema-follower.js";
import { splitStatements } from "./sql-lexer.js";
import { statementParameters } from "./sql-params.js";
import type { SqlArgs, SqlValue } from "./sql-value.js";
import { SchemaMovedError, SqlInputError } from "./sqlite-errors.js";
import { setsPragma } from "./statement-info.js";
import { programFacts } from "./statement-program.js";
import { statementTables, type TableUses } from "./statement-tables.js";

export { bindArguments } from "./bind.js";
export type { RowBudget } from "./execute.js";
export type { Column, Prepared } from "./prepared.js";

import { materialize } from "./prepared.js";

export type { SqlArgs, SqlValue } from "./sql-value.js";

/** How a statement's rows are wanted: kept or only counted, and against which budget. */
export interface ExecOptions {
  wantRows: boolean;
  budget?: RowBudget;
  /** Checked on its program (table-level permissions): a read off the event loop whose schema moved
   * meanwhile, which SQLite compiled again, fails with SchemaMovedError. */
  checkedProgram?: boolean;
}

export interface ExecResult {
  columns: Column[];
  rows: SqlValue[][];
  affectedRowCount: number;
  lastInsertRowid: bigint | null;
  rowsRead: number;
  rowsWritten: number;
  durationMs: number;
}

export interface ConnectionSettings {
  /** Refuse writes at the SQLite level (read-only tokens, blocked writes). */
  queryOnly: boolean;
  /** Largest size in pages, from the database's size limit; 0 = SQLite's maximum. */
  maxPageCount: number;
}

/**
 * Statements kept prepared per connection. Large enough that a batch cycling through a few hundred
 * texts (as libsql-client-ts's tests do) prepares each once: an LRU smaller than the cycle misses
 * on every step.
 */
export const STATEMENT_CACHE = 256;
/** Statements let go of before a sweep is due, and before one that reads the scan counter (see `sweepDue`). */
const [SWEEP_AFTER, SWEEP_BEFORE_SCAN_AFTER] = [4096, 128];

/**
 * One libSQL connection to one database file, as a Hrana stream uses it. It prepares each distinct
 * SQL text once and caches what SQLite says about it, and reports for every execution the counts
 * usage metering needs.
 */
export class EngineConnection {
  private readonly cache = new Map<string, Prepared>();
  private readonly settings: ConnectionSettings = { queryOnly: false, maxPageCount: 0 };
  // Not readonly: close() drops them so the connection can really close (see handle-release.ts).
  private changesStmt: Database.Statement;
  private scanStmt: Database.Statement;
  private readonly schema: SchemaFollower;
  private closed = false;
  /** Set while a statement runs on the driver's thread pool; `cancel` stops it. */
  private running: { interrupted: boolean } | undefined;
  /**
   * Statements this connection is done with, still referenced (see `sweep`). A statement is
   * finalized by the garbage collector, and finalizing takes its connection's lock: were one
   * collected while a statement of the same connection runs on the driver's thread pool, the
   * event loop would wait for that statement, and the timer that interrupts it would never fire.
   * So they are let go of only by `sweep`, while the connection is idle, or when it closes.
   */
  private garbage: object[] = [];

  constructor(
    readonly path: string,
    private readonly db: Database.Database,
    private readonly limits: ExecutionLimits,
    /** Shared by the process's connections to this database; a connection on its own keeps one. */
    epoch = new SchemaEpoch(),
  ) {
    this.changesStmt = db.prepare("SELECT changes(), last_insert_rowid()").raw(true).safeIntegers(true);
    this.schema = new SchemaFollower(db, epoch);
    // sqlite_stmt (SQLITE_ENABLE_STMTVTAB) is the only way this driver exposes a statement's scan
    // counter; a statement's text identifies it within the connection. It is read only around
    // statements that scan, and its cost grows with the statements alive on the connection.
    this.scanStmt = db.prepare("SELECT coalesce(sum(nscan), 0) FROM sqlite_stmt WHERE sql = ?").raw(true);
  }

  /** Set once a statement that sets a PRAGMA was compiled here (compiling applies it): never pooled again. */
  settingsChanged = false;

  get inTransaction(): boolean {
    return !this.closed && this.db.inTransaction;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether a statement is running off the event loop: nothing else may use the connection meanwhile. */
  get isBusy(): boolean {
    return this.running !== undefined;
  }

  /** Stops the statement running off the event loop, if any (its stream closed, or timed out). */
  cancel(): void {
    if (!this.running || this.running.interrupted) return;
    this.running.interrupted = true;
    interrupt(this.db);
  }

  /** Applies per-stream settings, issuing a PRAGMA only for what changed. */
  configure(next: ConnectionSettings): void {
    if (next.queryOnly !== this.settings.queryOnly) {
      this.db.exec(`PRAGMA query_only = ${next.queryOnly ? 1 : 0}`);
      this.settings.queryOnly = next.queryOnly;
    }
    if (next.maxPageCount !== this.settings.maxPageCount) {
      // 0xfffffffe is SQLite's own ceiling, i.e. no limit.
      this.db.exec(`PRAGMA max_page_count = ${next.maxPageCount || 0xfffffffe}`);
      this.settings.maxPageCount = next.maxPageCount;
    }
  }

  /**
   * Prepares one statement; a text with no statement, or several, is refused like sqld does.
   * `guard` sees the statement itself (comments and stray semicolons around it gone) and may
   * throw before SQLite compiles it: compiling alone applies many PRAGMAs.
   */
  prepare(sql: string, guard?: (statement: string) => void): Prepared {
    const checked = this.followSchema(false);
    const hit = this.cache.get(sql);
    if (hit) {
      this.cache.delete(sql);
      this.cache.set(sql, hit);
      return hit;
    }
    const statements = splitStatements(sql);
    if (statements.length === 0)
      throw new SqlInputError("SQL_NO_STATEMENT", "SQL string does not contain any statement");
    if (statements.length > 1) {
      throw new SqlInputError("SQL_MANY_STATEMENTS", "SQL string contains more than one statement");
    }
    const info = statements[0]!;
    guard?.(info.sql);
    if (setsPragma(info.sql)) this.settingsChanged = true;
    const stmt = this.compile(info.sql, checked);
    const reader = stmt.reader;
    if (reader) stmt.raw(true).safeIntegers(true);
    const prepared: Prepared = {
      info,
      ...programFacts(this.db, info, (helper) => this.garbage.push(helper)),
      params: statementParameters(info.sql),
      columns: reader ? stmt.columns().map((c) => ({ name: c.name, decltype: c.type })) : [],
      reader,
      stmt,
      runSql: info.sql,
    };
    if (!prepared.bounded) materialize(this.db, prepared, (s) => this.garbage.push(s));
    this.cache.set(sql, prepared);
    if (this.cache.size > STATEMENT_CACHE) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) {
        this.garbage.push(this.cache.get(oldest)!.stmt);
        this.cache.delete(oldest);
      }
    }
    return prepared;
  }

  /**
   * Whether the caller should `sweep` before its next statement: statements let go of still cost
   * memory and, worse, every read of the scan counter walks them (`scans`: the next statement is
   * one that reads it). A full collection costs tens of milliseconds, so it is rare otherwise.
   */
  sweepDue(scans: boolean): boolean {
    return this.garbage.length >= (scans ? SWEEP_BEFORE_SCAN_AFTER : SWEEP_AFTER);
  }

  /**
   * Lets the garbage collector finalize the statements this connection is done with. The caller
   * must not use the connection until it resolves (so none is finalized while the connection is
   * busy); any the collection didn't take are kept for later.
   */
  async sweep(): Promise<void> {
    const released = this.garbage.map((s) => new WeakRef(s));
    this.garbage = [];
    // A new WeakRef keeps its target alive until the current job ends: collect after it has.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await sweepStatements();
    for (const ref of released) {
      const kept = ref.deref();
      if (kept) this.garbage.push(kept);
    }
  }

  /** See schema-follower.ts; a changed schema empties the statement cache. Answers whether the version was read. */
  private followSchema(force: boolean): boolean {
    const { read, changed } = this.schema.follow(force);
    if (changed) {
      for (const p of this.cache.values()) this.garbage.push(p.stmt);
      this.cache.clear();
    }
    return read;
  }

  /** Compiles; a failure while the version went unread is tried again after reading it. */
  private compile(sql: string, checked: boolean): Database.Statement {
    try {
      return this.db.prepare(sql);
    } catch (e) {
      if (checked || !this.followSchema(true)) throw e;
      return this.db.prepare(sql);
    }
  }

  /** What a statement prepared here does to which tables (statement-tables.ts), kept with it. */
  tablesOf(p: Prepared): TableUses {
    p.tables ??= statementTables(this.db, p.info, (helper) => this.garbage.push(helper));
    return p.tables;
  }

  /**
   * Runs a prepared statement: at once when its program is bounded, otherwise off the event loop
   * (see execute.ts). Rows are collected only when `wantRows`, but always counted.
   */
  execute(p: Prepared, args: SqlArgs, opts: ExecOptions): ExecResult | Promise<ExecResult> {
    // Anything but a plain read may change the schema: DDL, or ROLLBACK TO undoing some.
    if (!p.readonly || p.info.kind !== "read") this.schema.unhold();
    if (!mayChangeSchema(p)) return this.executeAny(p, args, opts);
    return this.changingSchema(() => this.executeAny(p, args, opts));
  }

  /** Runs `fn`, moving the epoch before (a connection reading meanwhile reads again after) and after. */
  private changingSchema<T>(fn: () => T): T {
    const epoch = this.schema.epoch;
    epoch.moved();
    let done: T;
    try {
      done = fn();
    } catch (e) {
      epoch.moved();
      throw e;
    }
    if (done instanceof Promise) return done.finally(() => epoch.moved()) as T;
    epoch.moved();
    return done;
  }

  private executeAny(p: Prepared, args: SqlArgs, opts: ExecOptions): ExecResult | Promise<ExecResult> {
    noteRunning(this.path);
    const bound = bindArguments(p, args);
    const started = performance.now();
    if (!p.bounded) return this.executeLong(p, bound, opts, started);
    const scannedBefore = p.scans ? this.scanned(p.info.sql) : 0;
    if (!p.reader) {
      const r = p.stmt.run(bound);
      const rowid = p.info.isInsert
        ? exactRowid(r.lastInsertRowid, () => (this.changesStmt.get() as [bigint, bigint])[1])
        : null;
      return this.result(p, { rows: [], fetched: 0 }, started, scannedBefore, p.info.sql, {
        changes: p.info.isDml ? r.changes : 0,
        rowid,
      });
    }
    const ran = runBounded(this.db, this.request(p.stmt, p, bound, opts), this.limits);
    if (p.info.isExplain) resetExplain(p.stmt, bound);
    return this.result(p, ran, started, scannedBefore, p.runSql);
  }

  private async executeLong(
    p: Prepared,
    bound: SqlValue[] | Record<string, SqlValue>,
    opts: ExecOptions,
    started: number,
  ): Promise<ExecResult> {
    const scannedBefore = p.scans ? this.scanned(p.runSql) : 0;
    const cancel = { interrupted: false };
    this.running = cancel;
    // Moves whenever a statement that may change this database's schema runs in this process.
    const epoch = this.schema.epoch.current;
    let ran: Ran;
    try {
      ran = await runUnbounded(this.db, this.path, this.request(p.stmt, p, bound, opts), this.limits, cancel);
    } finally {
      this.running = undefined;
    }
    if (opts.checkedProgram && p.readonly && this.schema.epoch.current !== epoch)
      throw new SchemaMovedError();
    // A materialized read also steps through its own copy of the rows (the counter counts a
    // scan's steps from its first row to its last): those aren't rows read.
    const extraScan = p.runSql === p.info.sql ? 0 : Math.max(0, ran.fetched - 1);
    return this.result(p, ran, started, scannedBefore + extraScan, p.runSql);
  }

  private request(stmt: Database.Statement, p: Prepared, params: unknown, opts: ExecOptions) {
    return { stmt, params, reader: p.reader, wantRows: opts.wantRows, budget: opts.budget };
  }

  private result(
    p: Prepared,
    ran: Ran,
    started: number,
    scannedBefore: number,
    sql: string,
    write?: { changes: number; rowid: bigint | null },
  ): ExecResult {
    let changes = write?.changes ?? 0;
    let lastInsertRowid = write?.rowid ?? null;
    if (!write && p.info.isDml) {
      const [c, id] = this.changesStmt.get() as [bigint, bigint];
      changes = Number(c);
      if (p.info.isInsert) lastInsertRowid = id;
    }
    const scanned = p.scans ? Math.max(0, this.scanned(sql) - scannedBefore) : 0;
    return {
      columns: p.columns,
      rows: ran.rows,
      affectedRowCount: changes,
      lastInsertRowid,
      // Rows read: what the statement returned or touched, or what full scans stepped through if
      // that is more (an unindexed filter reads every row even when it returns few).
      rowsRead: Math.max(p.reader ? ran.fetched : p.info.isDml && !p.info.isInsert ? changes : 0, scanned),
      rowsWritten: changes,
      durationMs: performance.now() - started,
    };
  }

  /**
   * Moves every WAL frame into the database file. RESTART then lets the next write start the WAL
   * over from its beginning; TRUNCATE also empties the file now. False when a reader on an older
   * snapshot (or a writer) kept it from completing.
   */
  checkpoint(mode: "RESTART" | "TRUNCATE"): boolean {
    const stmt = this.db.prepare(`PRAGMA wal_checkpoint(${mode})`).raw(true);
    this.garbage.push(stmt);
    const [busy, log, done] = stmt.get() as number[];
    return busy === 0 && (log === done || log === -1 || log === 0);
  }

  /**
   * Rows of a query, one at a time, for the engine's own reads (dumps): INTEGER as bigint, no
   * statement cache, no metering. The connection is busy until the iteration ends.
   */
  rows(sql: string, args: readonly SqlValue[] = []): IterableIterator<SqlValue[]> {
    const stmt = this.db.prepare(sql).raw(true).safeIntegers(true);
    this.garbage.push(stmt);
    return stmt.iterate(...args) as IterableIterator<SqlValue[]>;
  }

  /** Runs one statement with arguments on this thread, for the engine's own use (never a client's SQL). */
  run(sql: string, args: readonly SqlValue[] = []): void {
    if (this.running) throw new Error("the connection is running a statement");
    const stmt = this.db.prepare(sql);
    this.garbage.push(stmt);
    this.changingSchema(() => stmt.run(...args));
  }

  /** Runs SQL that returns nothing, for the engine's own use (ROLLBACK on expiry, PRAGMAs, schema changes). */
  exec(sql: string): void {
    if (this.running) throw new Error("the connection is running a statement");
    this.changingSchema(() => this.db.exec(sql));
  }

  /** Closes the connection once its prepared statements are collected (see handle-release.ts). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cache.clear();
    this.garbage = [];
    const dropped = undefined as unknown as Database.Statement;
    this.changesStmt = dropped;
    this.schema.close();
    this.scanStmt = dropped;
    closeWhenUnreferenced(this.db);
  }

  private scanned(sql: string): number {
    return Number((this.scanStmt.get(sql) as number[] | undefined)?.[0] ?? 0);
  }
}
