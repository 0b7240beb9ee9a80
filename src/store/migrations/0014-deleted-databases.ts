import type { Kysely } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * Deleted databases and groups kept restorable for a while (Turso's recovery of deleted
 * databases). A deleted database's row leaves `databases` (its name is free at once, and nothing
 * that reads databases needs to know about deletion); what it was is kept here as JSON, with
 * where its files were moved aside and how many bytes they take. `purge_after` is when the sweep
 * removes both. `organizations.restore_enabled` = 0 turns keeping off for an organization.
 */
export async function up(db: Kysely<unknown>, _kind: DialectKind): Promise<void> {
  await db.schema
    .createTable("deleted_databases")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("group_id", "text", (c) => c.notNull())
    .addColumn("group_name", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("deleted_at", "text", (c) => c.notNull())
    .addColumn("group_deleted_at", "text")
    .addColumn("purge_after", "text", (c) => c.notNull())
    .addColumn("primary_location", "text", (c) => c.notNull())
    .addColumn("locations", "text", (c) => c.notNull())
    .addColumn("kept_bytes", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("record", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("deleted_databases_org_idx")
    .on("deleted_databases")
    .columns(["org_id", "deleted_at"])
    .execute();
  await db.schema
    .createIndex("deleted_databases_purge_idx")
    .on("deleted_databases")
    .column("purge_after")
    .execute();
  await db.schema
    .createTable("deleted_groups")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("deleted_at", "text", (c) => c.notNull())
    .addColumn("purge_after", "text", (c) => c.notNull())
    .addColumn("locations", "text", (c) => c.notNull())
    .addColumn("record", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .alterTable("organizations")
    .addColumn("restore_enabled", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
}
