import type { ExecResult } from "../../engine/connection.js";
import { identifiersIn, pragmaOf } from "../../engine/sql-tokens.js";

/**
 * `PRAGMA database_list` names each attached database's file: an absolute path into the server's
 * data folder. Tools read the list for its schema names (main, temp, aliases), so the PRAGMA keeps
 * working and only its `file` column comes back empty, as for an in-memory database. The
 * table-valued form (`pragma_database_list`) can put the path into any expression, so it is
 * refused instead (see `serverPathsRefusal`).
 */
export function withoutServerPaths(sql: string, result: ExecResult): ExecResult {
  if (!/database_list/i.test(sql) || pragmaOf(sql)?.name !== "database_list") return result;
  const file = result.columns.findIndex((c) => c.name === "file");
  if (file < 0) return result;
  return { ...result, rows: result.rows.map((row) => row.map((v, i) => (i === file ? "" : v))) };
}

/** Why a statement that could show the server's file paths is refused, or undefined. */
export function serverPathsRefusal(sql: string): string | undefined {
  if (!/pragma_database_list/i.test(sql) || !identifiersIn(sql).has("pragma_database_list")) return undefined;
  return "pragma_database_list shows the server's file paths and is not available; PRAGMA database_list lists the databases";
}
