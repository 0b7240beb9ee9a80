import type { Executor } from "./executor.js";
import type { OrgJwksTable } from "./schema.js";

/** The key sets each organization trusts for data-plane tokens, by name. */
export function orgJwksRepo(ex: Executor) {
  const { db } = ex;
  return {
    list: (orgId: string): Promise<OrgJwksTable[]> =>
      db.selectFrom("org_jwks").selectAll().where("org_id", "=", orgId).orderBy("name").execute(),

    /** Adds the set, or replaces the one of the same name (Turso's `save`). */
    save: (row: OrgJwksTable) =>
      db
        .insertInto("org_jwks")
        .values(row)
        .onConflict((oc) =>
          oc
            .columns(["org_id", "name"])
            .doUpdateSet({ url: row.url, issuer: row.issuer, audience: row.audience }),
        )
        .execute(),

    /** Whether a set of that name was there to remove. */
    remove: async (orgId: string, name: string): Promise<boolean> => {
      const r = await db
        .deleteFrom("org_jwks")
        .where("org_id", "=", orgId)
        .where("name", "=", name)
        .executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  };
}

export type OrgJwksRepo = ReturnType<typeof orgJwksRepo>;
