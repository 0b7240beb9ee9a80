import { pragmaOf } from "./sql-tokens.js";

/** What a statement does, as far as transaction handling and read/write routing care. */
export type StatementKind =
  | "read"
  | "write"
  | "begin"
  | "commit"
  | "rollback"
  | "savepoint"
  | "attach"
  | "detach"
  | "other";

/** One statement of a SQL text and what kind of statement it is. */
export interface StatementInfo {
  /** The statement's text, trimmed of surrounding whitespace and comments, without the trailing semicolon. */
  sql: string;
  kind: StatementKind;
  /** For kind "begin": "deferred" | "immediate" | "exclusive" | "readonly" (plain BEGIN = "deferred"). Otherwise undefined. */
  beginMode?: "deferred" | "immediate" | "exclusive" | "readonly";
  /** True for INSERT/UPDATE/DELETE/REPLACE (also when introduced by WITH): the statements whose changes() count. */
  isDml: boolean;
  /** True when the statement is INSERT or REPLACE (also after WITH): last_insert_rowid is meaningful. */
  isInsert: boolean;
  /** True when the statement starts with EXPLAIN. */
  isExplain: boolean;
}

/** PRAGMAs that only read even when given an argument, so `PRAGMA table_info(t)` isn't routed as a write. */
export const READ_PRAGMAS_WITH_ARG: ReadonlySet<string> = new Set([
  "table_info",
  "table_xinfo",
  "table_list",
  "index_info",
  "index_xinfo",
  "index_list",
  "foreign_key_list",
  "foreign_key_check",
  "integrity_check",
  "quick_check",
  "function_list",
  "module_list",
  "pragma_list",
  "collation_list",
  "database_list",
  "compile_options",
]);

/** Whether a statement sets a PRAGMA (`x = v`, or a call that isn't one of the reading ones), EXPLAINed or not. */
export function setsPragma(sql: string): boolean {
  if (!/^\s*(?:explain\b|pragma\b)/i.test(sql)) return false;
  const p = pragmaOf(sql);
  return (
    p !== undefined && (p.form === "assign" || (p.form === "call" && !READ_PRAGMAS_WITH_ARG.has(p.name)))
  );
}
