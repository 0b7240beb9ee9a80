import type { Kysely } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * `primary_leases`: one row per group whose primary some node serves. The node holding the
 * group's primary location renews `expires_at`; a failover bumps `epoch` and names the new
 * location and node, with `valid_from` set to when the old holder's lease runs out: the new
 * primary accepts writes only from then on, and the old one, unable to renew a lease whose epoch
 * moved on, stops accepting them before. `promoted_from` records where the promoted replica stood
 * in the old primary's history (JSON), so the old primary can say what it discards on rejoining.
 */
export async function up(db: Kysely<unknown>, _kind: DialectKind): Promise<void> {
  await db.schema
    .createTable("primary_leases")
    .addColumn("group_id", "text", (c) => c.primaryKey().references("groups.id").onDelete("cascade"))
    .addColumn("epoch", "integer", (c) => c.notNull())
    .addColumn("location", "text", (c) => c.notNull())
    .addColumn("node_id", "text", (c) => c.notNull())
    .addColumn("valid_from", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("promoted_from", "text")
    .execute();
  await db.schema.createIndex("primary_leases_node_idx").on("primary_leases").column("node_id").execute();
}
