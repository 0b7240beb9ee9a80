import { identifiersIn } from "./sql-tokens.js";

/**
 * SQL functions that reach the server's filesystem (SQLite's fileio functions, which the libsql
 * build carries) or load code. SQLite counts them as read-only, so nothing else would stop them.
 */
const FILE_FUNCTIONS = ["readfile", "writefile", "fsdir", "lsmode", "load_extension"];
const MAYBE_FILE_FUNCTION = /readfile|writefile|fsdir|lsmode|load_extension/i;

/** The file function a statement names, however spelled (quoted or not), if any. */
export function fileFunctionIn(sql: string): string | undefined {
  // The cheap test first: the full scan runs only for the rare statement that could match.
  if (!MAYBE_FILE_FUNCTION.test(sql)) return undefined;
  const ids = identifiersIn(sql);
  return FILE_FUNCTIONS.find((f) => ids.has(f));
}
