import type { Kysely } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * What the rest of the Platform API needs: plans with quotas (and each organization's plan),
 * invites, idempotency keys for retried creates, revoked database-token ids, and the columns of
 * branches (`parent_id`, `branched_at`) and schema databases (`is_schema`, `schema_id`).
 */
export async function up(db: Kysely<unknown>, kind: DialectKind): Promise<void> {
  await db.schema
    .createTable("plans")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("price", "text", (c) => c.notNull().defaultTo("0"))
    // Null quota: unlimited.
    .addColumn("rows_read", "bigint")
    .addColumn("rows_written", "bigint")
    .addColumn("storage_bytes", "bigint")
    .addColumn("databases", "integer")
    .addColumn("groups", "integer")
    .addColumn("locations", "integer")
    .addColumn("bytes_synced", "bigint")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db
    .insertInto("plans" as never)
    .values({ name: "self-hosted", price: "0", created_at: new Date().toISOString() } as never)
    .execute();
  await db.schema
    .alterTable("organizations")
    .addColumn("plan", "text", (c) => c.notNull().defaultTo("self-hosted"))
    .execute();

  await db.schema
    .createTable("invites")
    .addColumn("id", kind === "postgres" ? "serial" : "integer", (c) =>
      kind === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn("org_id", "text", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("email", "text")
    .addColumn("username", "text")
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("token", "text", (c) => c.notNull().unique())
    .addColumn("inviter", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("accepted_at", "text")
    .execute();
  await db.schema.createIndex("invites_org_idx").on("invites").column("org_id").execute();

  await db.schema
    .createTable("idempotency_keys")
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    .addColumn("status", "integer", (c) => c.notNull())
    .addColumn("response", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pk", ["user_id", "key"])
    .execute();

  await db.schema
    .createTable("revoked_db_tokens")
    .addColumn("jti", "text", (c) => c.primaryKey())
    .addColumn("db_id", "text")
    .addColumn("group_id", "text")
    /** When the token would have expired anyway (Unix seconds): after that the row can go. */
    .addColumn("expires_at", "bigint")
    .addColumn("revoked_at", "text", (c) => c.notNull())
    .execute();

  for (const [column, type] of [
    ["parent_id", "text"],
    ["branched_at", "text"],
    ["schema_id", "text"],
  ] as const) {
    await db.schema.alterTable("databases").addColumn(column, type).execute();
  }
  await db.schema
    .alterTable("databases")
    .addColumn("is_schema", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("databases_parent_idx").on("databases").column("parent_id").execute();
}
