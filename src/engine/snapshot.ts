import { rmSync, statSync } from "node:fs";
import Database from "libsql";
import type { EngineConnection } from "./connection.js";
import type { DatabaseKey } from "./encryption/keys.js";
import { keyOptions } from "./encryption/open.js";
import { closeWhenUnreferenced } from "./handle-release.js";

/** SQLite refused a file as a database, or found it damaged. */
export class DatabaseFileError extends Error {}

/** SQL text for a string literal. */
export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * Writes a transactionally consistent copy of the database behind `conn` to `dest`, a file that
 * must not exist yet. `VACUUM INTO` reads in one read transaction, so writers carry on meanwhile
 * (WAL) and the copy holds exactly the commits before it started. The connection must allow
 * writing files (query_only also forbids `VACUUM INTO`), so its settings are reset: the next
 * stream that takes it applies its own.
 */
export function snapshotInto(conn: EngineConnection, dest: string, key?: DatabaseKey): void {
  conn.configure({ queryOnly: false, maxPageCount: 0 });
  try {
    // From a keyed connection the copy is encrypted with the same key (the engine's VACUUM INTO).
    conn.exec(`VACUUM INTO ${sqlString(dest)}`);
    finishDatabaseFile(dest, key);
  } catch (e) {
    removeDatabaseFile(dest);
    throw e;
  }
}

/**
 * Writes a consistent copy of the database behind `conn` to `dest` for someone to download: the
 * same `VACUUM INTO` as snapshotInto, but left as SQLite writes it (rollback journal, no WAL
 * files to carry along), so that any SQLite opens it as one file.
 */
export function exportInto(conn: EngineConnection, dest: string): void {
  conn.configure({ queryOnly: false, maxPageCount: 0 });
  try {
    conn.exec(`VACUUM INTO ${sqlString(dest)}`);
  } catch (e) {
    removeDatabaseFile(dest);
    throw e;
  }
}

/**
 * Makes a freshly built file a hosted database: checked by SQLite (`quick_check`) and in WAL mode,
 * as every instance is; `key` for an encrypted one. Throws DatabaseFileError when SQLite finds it
 * damaged.
 */
export function finishDatabaseFile(file: string, key?: DatabaseKey): void {
  let db: Database.Database | undefined = new Database(file, { fileMustExist: true, ...keyOptions(key) });
  try {
    const verdict = db.prepare("PRAGMA quick_check").raw(true).all() as string[][];
    const problems = verdict.map((row) => String(row[0])).filter((v) => v !== "ok");
    if (problems.length > 0) {
      throw new DatabaseFileError(`the database file is damaged: ${problems.slice(0, 3).join("; ")}`);
    }
    db.exec("PRAGMA journal_mode = WAL");
  } finally {
    // Statements were prepared: close only once they are collected (see handle-release.ts).
    closeWhenUnreferenced(db);
    db = undefined;
  }
}

/** Bytes a database file occupies (its WAL is empty once built). */
export function fileBytes(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

export function removeDatabaseFile(file: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(file + suffix, { force: true });
}
