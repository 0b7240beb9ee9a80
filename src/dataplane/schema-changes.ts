import type { DataPlaneDatabase } from "../domain/data-access/ports.js";
import { HranaError } from "./hrana/errors.js";

/**
 * Whether a statement changes a database's schema (what a schema database passes on to the
 * databases following it). The text is one statement, trimmed of leading comments.
 */
export function isSchemaChange(sql: string): boolean {
  return /^(?:create|drop|alter)\b/i.test(sql);
}

/**
 * A database following a schema database takes its schema from it only: DDL run on it directly
 * would make it diverge, and the parent's next change could no longer apply. sqld refuses such DDL
 * to ordinary tokens the same way.
 */
export function refuseOnFollower(db: DataPlaneDatabase, sql: string): void {
  if (db.schema_id === null || !isSchemaChange(sql)) return;
  const parent = db.schema_name ? `schema database ${db.schema_name}` : "its schema database";
  throw new HranaError(
    "FORBIDDEN",
    `Authorization forbidden: database ${db.name} follows the schema of ${parent}; run schema changes there and they reach every database following it`,
  );
}
