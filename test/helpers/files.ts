import { readFileSync } from "node:fs";
import path from "node:path";
import Database from "libsql";
import { readOnlyFile } from "../../src/lib/read-only-file.js";

/** Path of a database's instance file in a location, as Shoal lays them out. */
export function instanceFile(dataDir: string, location: string, dbId: string): string {
  return path.join(dataDir, "locations", location, `${dbId}.db`);
}

/**
 * True when the file is a real SQLite database: the magic header, and libsql can open it and run
 * an integrity check.
 */
export function isValidDatabase(file: string): boolean {
  try {
    if (readFileSync(file).subarray(0, 16).toString("latin1") !== "SQLite format 3\u0000") return false;
    const db = new Database(readOnlyFile(file));
    try {
      const [row] = db.prepare("PRAGMA integrity_check").raw(true).all() as unknown[][];
      return row?.[0] === "ok";
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}
