import type { Kysely } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * Encryption at rest (ADR 0016): for a database created with `remote_encryption`, its cipher, the
 * random salt its engine passphrase is derived under, and the one-way check that tells the right
 * key from a wrong one. None of the three opens the data; the key itself is never stored. All
 * null for a plain database.
 */
export async function up(db: Kysely<unknown>, _kind: DialectKind): Promise<void> {
  await db.schema.alterTable("databases").addColumn("encryption_cipher", "text").execute();
  await db.schema.alterTable("databases").addColumn("encryption_salt", "text").execute();
  await db.schema.alterTable("databases").addColumn("encryption_check", "text").execute();
}
