import type { Executor } from "./executor.js";
import type { RevokedDbTokensTable } from "./schema.js";

/** Database and group tokens revoked one by one, by their `jti`. */
export function revokedDbTokensRepo(ex: Executor) {
  const { db } = ex;
  return {
    /** Records a revocation; revoking a token twice keeps the first record. */
    revoke: (row: RevokedDbTokensTable) =>
      db
        .insertInto("revoked_db_tokens")
        .values(row)
        .onConflict((oc) => oc.column("jti").doNothing())
        .execute(),

    /** Revoked ids still worth checking for a database: its own tokens' and its group's. */
    activeFor: async (dbId: string, groupId: string, nowSec: number) =>
      (
        await db
          .selectFrom("revoked_db_tokens")
          .select("jti")
          .where((eb) =>
            eb.and([
              eb.or([eb("db_id", "=", dbId), eb("group_id", "=", groupId)]),
              eb.or([eb("expires_at", "is", null), eb("expires_at", ">", nowSec)]),
            ]),
          )
          .execute()
      ).map((r) => r.jti),

    /** Forgets revocations of tokens that have expired anyway. */
    pruneExpired: (nowSec: number) =>
      db.deleteFrom("revoked_db_tokens").where("expires_at", "<=", nowSec).execute(),
  };
}

export type RevokedDbTokensRepo = ReturnType<typeof revokedDbTokensRepo>;
