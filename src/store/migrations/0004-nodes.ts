import type { Kysely } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * Several service processes on one store:
 * - `nodes`: every process that has started on the store, with the address other nodes reach it
 *   at and a heartbeat that tells live nodes from gone ones;
 * - `node_locations`: which node holds each location (serves its database files). One row per
 *   location, so two nodes can never both hold one: claiming is an insert that only one wins;
 * - `cluster_keys`: fingerprints of the signing keys every node must share (never the keys).
 */
export async function up(db: Kysely<unknown>, _kind: DialectKind): Promise<void> {
  await db.schema
    .createTable("nodes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("version", "text", (c) => c.notNull())
    .addColumn("started_at", "text", (c) => c.notNull())
    .addColumn("heartbeat_at", "text", (c) => c.notNull())
    // Set by a clean shutdown, cleared by the next start.
    .addColumn("stopped_at", "text")
    .execute();

  await db.schema
    .createTable("node_locations")
    .addColumn("location", "text", (c) => c.primaryKey())
    .addColumn("node_id", "text", (c) => c.notNull().references("nodes.id").onDelete("cascade"))
    .addColumn("claimed_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("node_locations_node_idx").on("node_locations").column("node_id").execute();

  await db.schema
    .createTable("cluster_keys")
    .addColumn("purpose", "text", (c) => c.primaryKey())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    .addColumn("recorded_at", "text", (c) => c.notNull())
    .execute();
}
