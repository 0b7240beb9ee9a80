import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "libsql";
import type { DatabaseKey } from "./encryption/keys.js";
import { keyOptions } from "./encryption/open.js";
import { finishDatabaseFile, removeDatabaseFile } from "./snapshot.js";
import { fileLevelUseIn } from "./sql-guard.js";
import { type StatementInfo, splitStatements } from "./sql-lexer.js";
import { pragmaOf } from "./sql-tokens.js";

/** A dump that can't be loaded: a refused statement, or one SQLite failed to run. */
export class DumpError extends Error {}

/**
 * PRAGMAs a dump may use. `.dump` output (sqlite3's and turso's shell) only needs the first
 * three; the others are harmless settings of the new database itself. Anything else could reach
 * beyond it (`temp_store_directory` is process-wide) or fight the server's own settings.
 */
const DUMP_PRAGMAS = new Set([
  "foreign_keys",
  "defer_foreign_keys",
  "writable_schema",
  "user_version",
  "application_id",
  "recursive_triggers",
  "ignore_check_constraints",
  "legacy_alter_table",
  "case_sensitive_like",
  "foreign_key_check",
  "integrity_check",
  "quick_check",
  "table_info",
]);

/**
 * Why a dump statement is refused, or undefined when it may run. A dump runs with the server's
 * file access, so nothing in it may name a file: no ATTACH (which opens or creates any path) and
 * no VACUUM INTO (which writes one).
 */
export function refusalOf(info: StatementInfo): string | undefined {
  if (info.kind === "attach" || info.kind === "detach") return "ATTACH and DETACH are not allowed in a dump";
  if (/^vacuum\b[\s\S]*\binto\b/i.test(info.sql)) return "VACUUM INTO is not allowed in a dump";
  const named = fileLevelUseIn(info.sql);
  if (named) return `${named.name}${named.reaches !== "pages" ? "()" : ""} is not allowed in a dump`;
  const pragma = pragmaOf(info.sql);
  if (pragma && !DUMP_PRAGMAS.has(pragma.name)) return `PRAGMA ${pragma.name} is not allowed in a dump`;
  return undefined;
}

/**
 * Loads a SQL dump (sqlite3's `.dump` format: statements separated by semicolons, usually inside
 * one BEGIN/COMMIT) into a new database file at `dest`. Every statement is checked before it runs;
 * the first refusal or failure stops the load, removes the file and throws DumpError naming the
 * statement. `maxPages` caps the database's size (0: no cap), so a dump larger than the new
 * database's size limit fails instead of creating an oversized database.
 */
export function importDump(
  text: string,
  dest: string,
  maxPages: number,
  key?: DatabaseKey,
): { statements: number } {
  mkdirSync(path.dirname(dest), { recursive: true });
  removeDatabaseFile(dest);
  const statements = splitStatements(text);
  const db = new Database(dest, keyOptions(key));
  try {
    db.exec("PRAGMA page_size = 4096");
    // The file is private until its database is committed; a crash leaves an orphan to sweep.
    db.exec("PRAGMA synchronous = OFF");
    if (maxPages > 0) db.exec(`PRAGMA max_page_count = ${maxPages}`);
    statements.forEach((info, i) => {
      const refused = refusalOf(info);
      if (refused) throw new DumpError(`statement ${i + 1} (${excerpt(info.sql)}): ${refused}`);
      try {
        // One statement per call: prepare() compiles only the first statement of its text, so
        // even a piece the splitter got wrong can't smuggle in a statement that wasn't checked.
        const stmt = db.prepare(info.sql);
        if (stmt.reader) stmt.all();
        else stmt.run();
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        const full = /full/i.test(message) ? "the dump is larger than the database's size limit" : message;
        throw new DumpError(`statement ${i + 1} (${excerpt(info.sql)}) failed: ${full}`);
      }
    });
    if (db.inTransaction) throw new DumpError("the dump ends inside a transaction: BEGIN without COMMIT");
  } catch (e) {
    db.close();
    removeDatabaseFile(dest);
    throw e;
  }
  db.close();
  try {
    finishDatabaseFile(dest, key);
  } catch (e) {
    removeDatabaseFile(dest);
    throw new DumpError(e instanceof Error ? e.message : String(e));
  }
  return { statements: statements.length };
}

function excerpt(sql: string): string {
  const flat = sql.replace(/\s+/g, " ");
  return flat.length > 60 ? `${flat.slice(0, 57)}...` : flat;
}
