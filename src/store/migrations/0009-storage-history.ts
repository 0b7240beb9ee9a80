import type { Kysely } from "kysely";

/**
 * The size of a database's primary at its last write of each day, so storage can be charted over
 * time (rows are counted per day already; storage was only ever measured now). Null on days that
 * predate this column or had no write: the size then is the last one recorded before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("usage_daily").addColumn("storage_bytes", "bigint").execute();
}
