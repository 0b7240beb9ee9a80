import type { Kysely } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * Seeds of new databases and schema databases:
 * - `awaiting_upload` marks a database created with the `database_upload` seed, which answers no
 *   SQL until its SQLite file is uploaded through the data plane (1 waiting, 2 installing);
 * - `schema_seq` is, for a database following a schema database, the last of the parent's schema
 *   changes it has (see engine/schema-journal.ts). Children are looked up on every schema change of
 *   their parent, hence the index on `schema_id`.
 */
export async function up(db: Kysely<unknown>, _kind: DialectKind): Promise<void> {
  await db.schema
    .alterTable("databases")
    .addColumn("awaiting_upload", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("databases")
    .addColumn("schema_seq", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("databases_schema_idx").on("databases").column("schema_id").execute();
}
