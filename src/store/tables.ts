import type { DB } from "./schema.js";

/**
 * Every control-plane table, in an order that satisfies its foreign keys: a table comes after the
 * tables it references, so rows can be inserted in this order and deleted in the reverse one. The
 * `satisfies` below fails to compile when a table is added to the schema and not here, so a copy
 * of the control plane can't silently leave one behind.
 */
export const STORE_TABLES = [
  "users",
  "organizations",
  "members",
  "api_tokens",
  "groups",
  "group_locations",
  "databases",
  "audit_logs",
  "usage_daily",
  "query_stats",
  "plans",
  "invites",
  "idempotency_keys",
  "revoked_db_tokens",
  "nodes",
  "node_locations",
  "primary_leases",
  "cluster_keys",
  "org_jwks",
  "deleted_databases",
  "deleted_groups",
] as const satisfies readonly (keyof DB)[];

type Listed = (typeof STORE_TABLES)[number];
// Compiles only while every table of the schema is listed above.
const everyTableListed: Record<Exclude<keyof DB, Listed>, never> = {};
void everyTableListed;

export type StoreTable = Listed;

/** Kysely's own bookkeeping: which migrations have run (its lock table is Kysely's business). */
export const MIGRATIONS_TABLE = "kysely_migration";
