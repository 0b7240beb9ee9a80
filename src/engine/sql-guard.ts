import { identifiersIn } from "./sql-tokens.js";

/**
 * SQL functions that reach the server's filesystem (SQLite's fileio functions, which the libsql
 * build carries) or load code. SQLite counts them as read-only, so nothing else would stop them.
 */
const FILE_FUNCTIONS = ["readfile", "writefile", "fsdir", "lsmode", "load_extension"];
/**
 * Tables that reach below SQL to a database file's pages. `sqlite_dbpage` reads and writes raw
 * pages: one UPDATE of it damages the file beyond what SQLite can open. SQLite lets it be used
 * only directly (never from a view or trigger), so refusing statements that name it is enough.
 * Reads go too: nothing a hosted client needs, and a write spelled through the same name is easier
 * to refuse whole than to tell apart.
 */
const RAW_PAGE_TABLES = ["sqlite_dbpage"];
/**
 * SQLite3 Multiple Ciphers' SQL functions: they change a connection's cipher settings (key
 * derivation, legacy formats), and pooled connections of encrypted databases must keep theirs.
 */
const CIPHER_FUNCTIONS = [
  "sqlite3mc_config",
  "sqlite3mc_config_cipher",
  "sqlite3mc_codec_data",
  "sqlite3mc_version",
];
const MAYBE_FILE_LEVEL = /readfile|writefile|fsdir|lsmode|load_extension|sqlite_dbpage|sqlite3mc_/i;

/** A name in a statement that reaches below SQL, and what it reaches. */
export interface FileLevelUse {
  name: string;
  /** `function`: the server's files or code; `pages`: the database file's raw pages; `cipher`: its encryption. */
  reaches: "function" | "pages" | "cipher";
}

/** The file function or raw-page table a statement names, however spelled (quoted or not), if any. */
export function fileLevelUseIn(sql: string): FileLevelUse | undefined {
  // The cheap test first: the full scan runs only for the rare statement that could match.
  if (!MAYBE_FILE_LEVEL.test(sql)) return undefined;
  const ids = identifiersIn(sql);
  const fn = FILE_FUNCTIONS.find((f) => ids.has(f));
  if (fn) return { name: fn, reaches: "function" };
  const cipher = CIPHER_FUNCTIONS.find((f) => ids.has(f));
  if (cipher) return { name: cipher, reaches: "cipher" };
  const table = RAW_PAGE_TABLES.find((t) => ids.has(t));
  return table ? { name: table, reaches: "pages" } : undefined;
}

/** Why a statement's file-level name may not run, in words, or undefined. */
export function fileLevelRefusal(sql: string): string | undefined {
  const use = fileLevelUseIn(sql);
  if (!use) return undefined;
  if (use.reaches === "cipher")
    return `${use.name}() changes the connection's encryption and is not available`;
  return use.reaches === "function"
    ? `${use.name}() reaches the server's files and is not available`
    : `${use.name} reads and writes the database file's raw pages and is not available`;
}
