import { type Insertable, sql } from "kysely";
import type { Executor } from "./executor.js";
import type { MemberRow, OrganizationRow, OrganizationsTable } from "./schema.js";
import { guardUnique } from "./unique.js";

export type OrganizationPatch = Partial<
  Pick<OrganizationRow, "overages" | "blocked_reads" | "blocked_writes" | "restore_enabled">
>;

export function organizationsRepo(ex: Executor) {
  const { db, dialect } = ex;
  return {
    /**
     * Locks organization rows until the transaction ends, in id order. Every transaction that
     * locks organizations and groups takes the organizations first, so two of them can't wait on
     * each other. (SQLite runs one writer at a time already.)
     */
    lockAll: async (ids: readonly string[]) => {
      if (dialect.kind !== "postgres" || ids.length === 0) return;
      const sorted = [...new Set(ids)].sort();
      await sql`select id from organizations where id in (${sql.join(sorted)}) order by id for update`.execute(
        db,
      );
    },

    insert: (row: Insertable<OrganizationsTable>) =>
      guardUnique(ex, "organization slug", () => db.insertInto("organizations").values(row).execute()),

    findBySlug: (slug: string) =>
      db.selectFrom("organizations").selectAll().where("slug", "=", slug).executeTakeFirst(),

    findById: (id: string) =>
      db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst(),

    /**
     * Organizations the user belongs to, by slug, with the user's role in each. `orgId` keeps only
     * that one; `after` and `limit` cut one page (keyset on the slug).
     */
    listForUser: (
      userId: string,
      page: { orgId?: string; after?: string; limit?: number } = {},
    ): Promise<Array<OrganizationRow & { role: MemberRow["role"] }>> => {
      let q = db
        .selectFrom("organizations as o")
        .innerJoin("members as m", "m.org_id", "o.id")
        .selectAll("o")
        .select("m.role")
        .where("m.user_id", "=", userId);
      if (page.orgId !== undefined) q = q.where("o.id", "=", page.orgId);
      if (page.after !== undefined) q = q.where("o.slug", ">", page.after);
      if (page.limit !== undefined) q = q.limit(page.limit);
      return q.orderBy("o.slug").execute();
    },

    update: async (id: string, patch: OrganizationPatch) => {
      if (Object.keys(patch).length === 0) return;
      await db.updateTable("organizations").set(patch).where("id", "=", id).execute();
    },

    delete: (id: string) => db.deleteFrom("organizations").where("id", "=", id).execute(),
  };
}

export type OrganizationsRepo = ReturnType<typeof organizationsRepo>;
