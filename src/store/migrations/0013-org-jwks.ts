import type { Kysely } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * `org_jwks`: the identity providers an organization trusts to sign data-plane tokens for its
 * databases (Turso's `org jwks`), one row per name. `issuer` and `audience`, when set, are claims
 * every token verified against the set must carry.
 */
export async function up(db: Kysely<unknown>, _kind: DialectKind): Promise<void> {
  await db.schema
    .createTable("org_jwks")
    .addColumn("org_id", "text", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("issuer", "text")
    .addColumn("audience", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("org_jwks_pk", ["org_id", "name"])
    .execute();
}
