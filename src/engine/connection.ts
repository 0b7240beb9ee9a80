import type Database from "libsql";
import { closeWhenUnreferenced, statementsDropped } from "./handle-release.js";
import { type StatementInfo, splitStatements } from "./sql-lexer.js";
import { statementParameters } from "./sql-params.js";
import { SqlInputError } from "./sqlite-errors.js";
import { programFacts } from "./statement-program.js";

/** A SQLite value as the engine passes it: INTEGER as bigint, REAL as number, BLOB as bytes. */
export type SqlValue = null | bigint | number | string | Uint8Array;
/** Positional arguments, or named ones keyed by name without its `:`/`@`/`$` prefix. */
export type SqlArgs = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

export interface Column {
  name: string;
  decltype: string | null;
}

/** A statement prepared on one connection, with what the engine learned about it once. */
export interface Prepared {
  info: StatementInfo;
  /** SQLite's own verdict (sqlite3_stmt_readonly): false for anything that writes, even BEGIN IMMEDIATE. */
  readonly: boolean;
  /** Parameter names in SQLite's index order; null for positional ones. */
  params: Array<string | null>;
  columns: Column[];
  reader: boolean;
  /** Whether the query plan scans a table, so rows read must be counted from SQLite's scan counter. */
  scans: boolean;
  stmt: Database.Statement;
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
  private schemaStmt: Database.Statement;
  private scanStmt: Database.Statement;
  /** The schema version the cache was built on; -1 until the first check. */
  private schemaVersion = -1;
  /**
   * Set once the schema was checked inside the open transaction: its snapshot hides other
   * connections' changes, so only this connection's own writes can move the schema until it ends.
   */
  private schemaHeld = false;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly db: Database.Database,
  ) {
    this.changesStmt = db.prepare("SELECT changes(), last_insert_rowid()").raw(true).safeIntegers(true);
    this.schemaStmt = db.prepare("PRAGMA schema_version").raw(true);
    // sqlite_stmt (SQLITE_ENABLE_STMTVTAB) is the only way this driver exposes a statement's scan
    // counter; a statement's text identifies it within the connection. It is read only around
    // statements that scan, and its cost grows with the statements alive on the connection.
    this.scanStmt = db.prepare("SELECT coalesce(sum(nscan), 0) FROM sqlite_stmt WHERE sql = ?").raw(true);
  }

  get inTransaction(): boolean {
    return !this.closed && this.db.inTransaction;
  }

  get isClosed(): boolean {
    return this.closed;
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
    this.followSchema();
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
    const stmt = this.db.prepare(info.sql);
    const reader = stmt.reader;
    if (reader) stmt.raw(true).safeIntegers(true);
    const prepared: Prepared = {
      info,
      ...programFacts(this.db, info, () => statementsDropped()),
      params: statementParameters(info.sql),
      columns: reader ? stmt.columns().map((c) => ({ name: c.name, decltype: c.type })) : [],
      reader,
      stmt,
    };
    this.cache.set(sql, prepared);
    if (this.cache.size > STATEMENT_CACHE) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
      statementsDropped();
    }
    return prepared;
  }

  /**
   * Keeps this connection's view of the schema current. SQLite re-prepares a cached statement whose
   * schema changed when it runs, but compiles a new statement against the schema it last loaded, so
   * after another connection's `DROP TABLE t; CREATE TABLE t(a, b)` an idle pooled connection
   * refused `INSERT INTO t VALUES (1, 2)` with "table t has 1 columns". What the cache learned
   * (columns, parameters) may be stale too. So when the schema version moved, the cache is dropped
   * and one statement that touches the schema is run: its schema check reloads the schema.
   */
  private followSchema(): void {
    if (this.schemaHeld && this.db.inTransaction) return;
    this.schemaHeld = this.db.inTransaction;
    const version = (this.schemaStmt.get() as number[])[0]!;
    if (version === this.schemaVersion) return;
    statementsDropped(this.cache.size);
    this.cache.clear();
    this.db.exec("SELECT 1 FROM sqlite_schema LIMIT 0");
    // Read before reloading: a change committed in between shows as a new version next time.
    this.schemaVersion = version;
  }

  /** Runs a prepared statement. Rows are collected only when `wantRows`, but always counted. */
  execute(p: Prepared, args: SqlArgs, wantRows: boolean): ExecResult {
    const bound = bindArguments(p, args);
    // Anything but a plain read may change the schema: DDL, or ROLLBACK TO undoing some.
    if (!p.readonly || p.info.kind !== "read") this.schemaHeld = false;
    const started = performance.now();
    const scannedBefore = p.scans ? this.scanned(p) : 0;
    const rows: SqlValue[][] = [];
    let returned = 0;
    let changes = 0;
    let lastInsertRowid: bigint | null = null;
    if (p.reader) {
      for (const row of p.stmt.iterate(bound) as Iterable<SqlValue[]>) {
        returned++;
        if (wantRows) rows.push(row);
      }
      if (p.info.isExplain) resetExplain(p.stmt, bound);
      if (p.info.isDml) {
        const [c, id] = this.changesStmt.get() as [bigint, bigint];
        changes = Number(c);
        if (p.info.isInsert) lastInsertRowid = id;
      }
    } else {
      const r = p.stmt.run(bound);
      if (p.info.isDml) changes = r.changes;
      // The driver reports last_insert_rowid as a JS number, which rounds past 2^53.
      if (p.info.isInsert) lastInsertRowid = (this.changesStmt.get() as [bigint, bigint])[1];
    }
    const scanned = p.scans ? this.scanned(p) - scannedBefore : 0;
    const durationMs = performance.now() - started;
    return {
      columns: p.columns,
      rows,
      affectedRowCount: changes,
      lastInsertRowid,
      // Rows read: what the statement returned or touched, or what full scans stepped through if
      // that is more (an unindexed filter reads every row even when it returns few).
      rowsRead: Math.max(p.reader ? returned : p.info.isDml && !p.info.isInsert ? changes : 0, scanned),
      rowsWritten: changes,
      durationMs,
    };
  }

  /**
   * Moves every WAL frame into the database file and empties the WAL (TRUNCATE). False when a
   * reader on an older snapshot kept it from completing.
   */
  checkpoint(): boolean {
    const [busy, log, done] = this.db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").raw(true).get() as number[];
    statementsDropped();
    return busy === 0 && (log === done || log === -1 || log === 0);
  }

  /**
   * Rows of a query, one at a time, for the engine's own reads (dumps): INTEGER as bigint, no
   * statement cache, no metering. The connection is busy until the iteration ends.
   */
  rows(sql: string, args: readonly SqlValue[] = []): IterableIterator<SqlValue[]> {
    return this.db
      .prepare(sql)
      .raw(true)
      .safeIntegers(true)
      .iterate(...args) as IterableIterator<SqlValue[]>;
  }

  /** Runs SQL that returns nothing, for the engine's own use (ROLLBACK on expiry, PRAGMAs). */
  exec(sql: string): void {
    this.db.exec(sql);
  }

  /** Closes the connection once its prepared statements are collected (see handle-release.ts). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cache.clear();
    const dropped = undefined as unknown as Database.Statement;
    this.changesStmt = dropped;
    this.schemaStmt = dropped;
    this.scanStmt = dropped;
    closeWhenUnreferenced(this.db);
  }

  private scanned(p: Prepared): number {
    return Number((this.scanStmt.get(p.info.sql) as number[] | undefined)?.[0] ?? 0);
  }
}

/**
 * The driver leaves an EXPLAIN statement "in progress" after reading all its rows (other
 * statements are reset), and an in-progress statement makes the connection's next COMMIT fail with
 * "SQL statements in progress". `get()` runs it once more and resets it; EXPLAIN does no work.
 */
function resetExplain(stmt: Database.Statement, bound: SqlValue[] | Record<string, SqlValue>): void {
  try {
    stmt.get(bound);
  } catch {
    // Binding errors surfaced on the first run already.
  }
}

/** `?` (null) and `?NNN` parameters take positional arguments; `:x`, `@x` and `$x` named ones. */
function isPositional(name: string | null): boolean {
  return name === null || name.charCodeAt(0) === 63; // "?"
}

/**
 * Checks arguments against the statement's parameters and shapes them for the driver, with sqld's
 * rules: `?` and `?NNN` take positional arguments, `:x`/`@x`/`$x` take the named argument of that
 * exact name or else `x`; too many or missing arguments are refused, at the first parameter (in
 * SQLite's order) that has no value. (The driver itself would pad missing ones with NULL and
 * ignore extra ones, hiding client bugs.)
 */
export function bindArguments(
  p: Pick<Prepared, "params">,
  args: SqlArgs,
): SqlValue[] | Record<string, SqlValue> {
  const invalid = (detail: string) =>
    new SqlInputError("ARGS_INVALID", `Arguments do not match SQL parameters: ${detail}`);
  const positional = Array.isArray(args) ? (args as readonly SqlValue[]) : undefined;
  const named = positional ? undefined : (args as Readonly<Record<string, SqlValue>>);
  const supplied = positional ? positional.length : Object.keys(named!).length;
  if (supplied > p.params.length) {
    throw invalid(`too many parameters, expected ${p.params.length} found ${supplied}`);
  }
  const out: Record<string, SqlValue> = {};
  p.params.forEach((name, i) => {
    if (isPositional(name)) {
      const at = name === null ? i : Number(name.slice(1)) - 1;
      if (positional?.[at] === undefined) throw invalid(`value for parameter ${name ?? i + 1} not found`);
      return;
    }
    const value = named && (name! in named ? named[name!] : named[name!.slice(1)]);
    if (value === undefined) throw invalid(`value for parameter ${name} not found`);
    // The driver matches an unprefixed key against :x, @x and $x alike.
    out[name!.slice(1)] = value;
  });
  // Every parameter found its value, so they are all positional or all named.
  return positional ? [...positional] : out;
}
