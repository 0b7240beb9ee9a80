import type Database from "libsql";
import type { StatementInfo } from "./sql-lexer.js";
import type { TableUses } from "./statement-tables.js";

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
  /** Whether its program's work is bounded, so it may run on the event loop (see statement-program.ts). */
  bounded: boolean;
  /** The statement that runs: the one prepared from `info.sql`, or its materialized form (see `materialize`). */
  stmt: Database.Statement;
  /** The text of `stmt`, which SQLite's scan counter is keyed by. */
  runSql: string;
  /** What it does to which tables: read off its program the first time a token with table-level limits runs it. */
  tables?: TableUses;
}

/**
 * A read's statement wrapped as `WITH x AS MATERIALIZED (<read>) SELECT * FROM x`. SQLite then
 * computes the whole result in the statement's first step, which runs on the driver's thread
 * pool where it can be interrupted; the later steps, which run on the event loop and which the
 * driver gives no way to interrupt, only read rows already made. Without it a read whose first
 * row comes at once and whose next never does (a filter over an endless recursive CTE) would
 * hold the event loop for good. Rows, their order and their values are the read's own (the copy
 * keeps insertion order); names and types are still taken from the read itself.
 */
export function materialize(db: Database.Database, p: Prepared, drop: (helper: object) => void): void {
  if (!p.reader || !p.readonly || p.info.isExplain || !/^(select|with|values)\b/i.test(p.info.sql)) return;
  const sql = `WITH shoal_result AS MATERIALIZED (${p.info.sql}\n) SELECT * FROM shoal_result`;
  try {
    const wrapped = db.prepare(sql).raw(true).safeIntegers(true);
    // The statement prepared from the read itself is done with: its facts are known.
    drop(p.stmt);
    p.stmt = wrapped;
    p.runSql = sql;
  } catch {
    // A read that can't be wrapped runs as it is.
  }
}
