import type { Kysely } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * The data plane looks revoked database and group tokens up by database and by group whenever it
 * loads a database's record.
 */
export async function up(db: Kysely<unknown>, _kind: DialectKind): Promise<void> {
  await db.schema.createIndex("revoked_db_tokens_db_idx").on("revoked_db_tokens").column("db_id").execute();
  await db.schema
    .createIndex("revoked_db_tokens_group_idx")
    .on("revoked_db_tokens")
    .column("group_id")
    .execute();
}
