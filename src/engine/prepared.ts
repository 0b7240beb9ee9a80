import type Database from "libsql";
import type { StatementInfo } from "./sql-lexer.js";

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
}
