import type { Kysely } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * The first schema. Written once with Kysely's schema builder; the only dialect difference is how
 * an auto-incrementing key is spelled.
 */
export async function up(db: Kysely<unknown>, kind: DialectKind): Promise<void> {
  await createAccountTables(db);
  await createGroupAndDatabaseTables(db);
  await createAuditLog(db, kind);
}

/** Users, organizations, their members and API tokens. */
async function createAccountTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("users")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("username", "text", (c) => c.notNull().unique())
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("is_admin", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("organizations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("slug", "text", (c) => c.notNull().unique())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("overages", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("blocked_reads", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("blocked_writes", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("members")
    .addColumn("org_id", "text", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("members_pk", ["org_id", "user_id"])
    .execute();
  await db.schema.createIndex("members_user_idx").on("members").column("user_id").execute();

  await db.schema
    .createTable("api_tokens")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("org_id", "text", (c) => c.references("organizations.id").onDelete("cascade"))
    .addColumn("group_id", "text")
    .addColumn("scopes", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addUniqueConstraint("api_tokens_user_name_uq", ["user_id", "name"])
    .execute();
}

/** Groups, their locations, and databases. */
async function createGroupAndDatabaseTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("groups")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("primary_location", "text", (c) => c.notNull())
    .addColumn("archived", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("delete_protection", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addUniqueConstraint("groups_org_name_uq", ["org_id", "name"])
    .execute();

  await db.schema
    .createTable("group_locations")
    .addColumn("group_id", "text", (c) => c.notNull().references("groups.id").onDelete("cascade"))
    .addColumn("location", "text", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("added_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("group_locations_pk", ["group_id", "location"])
    .execute();

  await db.schema
    .createTable("databases")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("group_id", "text", (c) => c.notNull().references("groups.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("size_limit", "text")
    .addColumn("block_reads", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("block_writes", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("allow_attach", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("delete_protection", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addUniqueConstraint("databases_org_name_uq", ["org_id", "name"])
    .execute();
  await db.schema.createIndex("databases_group_idx").on("databases").column("group_id").execute();
}

async function createAuditLog(db: Kysely<unknown>, kind: DialectKind): Promise<void> {
  await db.schema
    .createTable("audit_logs")
    .addColumn("id", kind === "postgres" ? "bigserial" : "integer", (c) =>
      kind === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("code", "text", (c) => c.notNull())
    .addColumn("message", "text", (c) => c.notNull())
    .addColumn("origin", "text", (c) => c.notNull())
    .addColumn("author", "text", (c) => c.notNull())
    .addColumn("data", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("audit_logs_org_idx").on("audit_logs").columns(["org_id", "id"]).execute();
}
