import type { Kysely } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * A database's IP allowlist: a JSON array of addresses and CIDR blocks whose clients the data
 * plane serves; null (the default) serves every address.
 */
export async function up(db: Kysely<unknown>, _kind: DialectKind): Promise<void> {
  await db.schema.alterTable("databases").addColumn("allowed_ips", "text").execute();
}
