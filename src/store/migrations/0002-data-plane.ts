import { type Kysely, sql } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * What the data plane needs from the control plane:
 * - `hostname_label`: `<db>-<org>` must be unique across the instance, since the Host header is
 *   all a client sends and `a-b` + `c` and `a` + `b-c` would otherwise share a hostname;
 * - token generations: rotating a database's or group's credentials bumps its generation, and a
 *   database token is valid only while both generations it was minted with are current;
 * - usage counters per database and day, and per-query statistics.
 */
export async function up(db: Kysely<unknown>, _kind: DialectKind): Promise<void> {
  await db.schema.alterTable("databases").addColumn("hostname_label", "text").execute();
  await sql`update databases set hostname_label = name || '-' || (select slug from organizations o where o.id = databases.org_id)`.execute(
    db,
  );
  await db.schema
    .createIndex("databases_hostname_label_uq")
    .on("databases")
    .column("hostname_label")
    .unique()
    .execute();
  await db.schema
    .alterTable("databases")
    .addColumn("token_generation", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("groups")
    .addColumn("token_generation", "integer", (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable("usage_daily")
    .addColumn("db_id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("day", "text", (c) => c.notNull())
    .addColumn("rows_read", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("rows_written", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("queries", "bigint", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("usage_daily_pk", ["db_id", "day"])
    .execute();
  await db.schema.createIndex("usage_daily_org_idx").on("usage_daily").columns(["org_id", "day"]).execute();

  await db.schema
    .createTable("query_stats")
    .addColumn("db_id", "text", (c) => c.notNull().references("databases.id").onDelete("cascade"))
    .addColumn("query", "text", (c) => c.notNull())
    .addColumn("count", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("rows_read", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("rows_written", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("total_ms", "double precision", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("query_stats_pk", ["db_id", "query"])
    .execute();
}
