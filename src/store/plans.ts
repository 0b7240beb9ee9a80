import type { Insertable, Updateable } from "kysely";
import { sql } from "kysely";
import { guardUnique } from "./dialect.js";
import type { Executor } from "./executor.js";
import type { PlansTable } from "./schema.js";

/** What an organization holds, as its plan's quotas count it. */
export interface OrgHoldings {
  databases: number;
  groups: number;
  /** Distinct locations across the organization's groups. */
  locations: number;
}

export function plansRepo(ex: Executor) {
  const { db, dialect } = ex;
  const count = async (q: Promise<{ n: number | string | bigint } | undefined>) => Number((await q)?.n ?? 0);
  return {
    find: (name: string) => db.selectFrom("plans").selectAll().where("name", "=", name).executeTakeFirst(),

    list: () => db.selectFrom("plans").selectAll().orderBy("name").execute(),

    insert: (row: Insertable<PlansTable>) =>
      guardUnique(ex, "plan name", () => db.insertInto("plans").values(row).execute()),

    update: async (name: string, patch: Updateable<PlansTable>) => {
      if (Object.keys(patch).length === 0) return;
      await db.updateTable("plans").set(patch).where("name", "=", name).execute();
    },

    delete: (name: string) => db.deleteFrom("plans").where("name", "=", name).execute(),

    /** Organizations on a plan. */
    countOrganizations: (name: string) =>
      count(
        db
          .selectFrom("organizations")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("plan", "=", name)
          .executeTakeFirst(),
      ),

    holdingsOf: async (orgId: string): Promise<OrgHoldings> => ({
      databases: await count(
        db
          .selectFrom("databases")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("org_id", "=", orgId)
          .executeTakeFirst(),
      ),
      groups: await count(
        db
          .selectFrom("groups")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("org_id", "=", orgId)
          .executeTakeFirst(),
      ),
      locations: await count(
        db
          .selectFrom("group_locations as l")
          .innerJoin("groups as g", "g.id", "l.group_id")
          .select((eb) => eb.fn.count<number>("l.location").distinct().as("n"))
          .where("g.org_id", "=", orgId)
          .executeTakeFirst(),
      ),
    }),

    /** Whether one of the organization's groups already has the location. */
    usesLocation: async (orgId: string, location: string) =>
      (await db
        .selectFrom("group_locations as l")
        .innerJoin("groups as g", "g.id", "l.group_id")
        .select("l.location")
        .where("g.org_id", "=", orgId)
        .where("l.location", "=", location)
        .executeTakeFirst()) !== undefined,

    /**
     * Serialises quota checks of one organization until the transaction ends. SQLite runs one
     * writer at a time already; PostgreSQL needs the row lock, or two concurrent creates could
     * both see room for one more.
     */
    lockOrganization: async (orgId: string) => {
      if (dialect.kind === "postgres") {
        await sql`select id from organizations where id = ${orgId} for update`.execute(db);
      }
    },
  };
}

export type PlansRepo = ReturnType<typeof plansRepo>;
