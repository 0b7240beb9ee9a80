import type { Kysely } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * `primary_leases.standbys`: the replica locations (a JSON array) that the lease holder promises
 * hold every write it has acknowledged, so an automatic failover may promote only one of them.
 * NULL means the holder doesn't confirm writes with its standbys (`SHOAL_STANDBY_CONFIRM_MS=0`):
 * any location may then be promoted, with the loss window that implies. Only the holder changes
 * the list, at its own epoch; a new epoch starts it empty.
 */
export async function up(db: Kysely<unknown>, _kind: DialectKind): Promise<void> {
  await db.schema.alterTable("primary_leases").addColumn("standbys", "text").execute();
}
