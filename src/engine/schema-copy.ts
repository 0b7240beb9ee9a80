import { createHash } from "node:crypto";
import Database from "libsql";
import type { EngineConnection } from "./connection.js";
import { closeWhenUnreferenced } from "./handle-release.js";

/** One entry of a database's schema (`sqlite_schema`). */
export interface SchemaObject {
  type: string;
  name: string;
  tblName: string;
  sql: string | null;
}

const SCHEMA_SQL = "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid";
const ORDER = ["table", "index", "view", "trigger"];

function toObjects(rows: unknown[][]): SchemaObject[] {
  return rows.map(([type, name, tblName, sql]) => ({
    type: String(type),
    name: String(name),
    tblName: String(tblName),
    sql: sql === null ? null : String(sql),
  }));
}

/** The schema of a hosted database, through one of its connections (in its current transaction). */
export function readSchema(conn: EngineConnection): SchemaObject[] {
  return toObjects([...conn.rows(SCHEMA_SQL)]);
}

/**
 * A digest of a schema, equal for two databases exactly when they have the same tables, indexes,
 * views and triggers defined by the same SQL. ANALYZE's statistics tables don't count.
 */
export function schemaFingerprint(objects: readonly SchemaObject[]): string {
  const kept = objects
    .filter((o) => !o.name.startsWith("sqlite_stat"))
    .map((o) => [o.type, o.name, o.tblName, o.sql])
    .sort((a, b) => `${a[0]}\u0000${a[1]}`.localeCompare(`${b[0]}\u0000${b[1]}`));
  return createHash("sha256").update(JSON.stringify(kept)).digest("hex");
}

/**
 * Creates a new database file holding a schema and no rows: tables first, then indexes, views and
 * triggers, each in the order the source created them, all in one transaction. Objects SQLite
 * makes by itself are skipped (internal `sqlite_` tables, automatic indexes, and the shadow tables
 * a virtual table creates with it). Throws when the result differs from the source. The file is
 * left in rollback-journal mode; `finishDatabaseFile` makes it a hosted (WAL) database.
 */
export function createWithSchema(file: string, objects: readonly SchemaObject[]): void {
  let db: Database.Database | undefined = new Database(file);
  try {
    db.exec("PRAGMA page_size = 4096");
    const exists = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = ?").raw(true);
    db.exec("BEGIN IMMEDIATE");
    for (const type of ORDER) {
      for (const o of objects) {
        if (o.type !== type || o.sql === null || o.name.startsWith("sqlite_")) continue;
        if (exists.get(o.name) !== undefined) continue;
        db.exec(o.sql);
      }
    }
    const copied = toObjects(db.prepare(SCHEMA_SQL).raw(true).all() as unknown[][]);
    if (schemaFingerprint(copied) !== schemaFingerprint(objects)) {
      db.exec("ROLLBACK");
      throw new Error("the copied schema differs from its source");
    }
    db.exec("COMMIT");
  } catch (e) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw e;
  } finally {
    closeWhenUnreferenced(db);
    db = undefined;
  }
}
