import type { Insertable, Updateable } from "kysely";
import { sql } from "kysely";
import type { Executor } from "./executor.js";
import type { PlansTable } from "./schema.js";
import { guardUnique } from "./unique.js";

/** An organization with the quotas of its plan that usage can use up, as blocking judges them. */
export interface MeteredOrganization {
  id: string;
  plan: string;
  overages: number;
  blocked_reads: number;
  blocked_writes: number;
  rows_read: number | null;
  rows_written: number | null;
  storage_bytes: number | null;
}

/** Longest list of ids sent in one `in (...)`, well under both dialects' parameter limits. */
const ID_CHUNK = 500;

/** What an organization holds, as its plan's quotas count it. */
export interface OrgHoldings {
  databases: number;
  groups: number;
  /** Distinct locations across the organization's groups. */
  locations: number;
}

/** Plans themselves, and which organizations are on each. */
function planRows(ex: Executor) {
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

    /** Moves an organization to another plan. */
    assign: (orgId: string, plan: string) =>
      db.updateTable("organizations").set({ plan }).where("id", "=", orgId).execute(),

    /** Ids of the organizations on a plan. */
    organizationsOn: async (name: string) =>
      (await db.selectFrom("organizations").select("id").where("plan", "=", name).execute()).map((r) => r.id),

    /**
     * Serialises quota checks of one organization until the transaction ends. SQLite runs one
     * writer at a time already; PostgreSQL needs the row lock, or two concurrent creates could
     * both see room for one more.
     */
    /** Locks a plan row until the transaction ends, so it can't be deleted while it is assigned. */
    lockPlan: async (name: string) => {
      if (dialect.kind === "postgres") {
        await sql`select name from plans where name = ${name} for update`.execute(db);
      }
    },
  };
}

/** The organizations whose quotas are judged after a usage flush. */
function planMetering(ex: Executor) {
  const { db, dialect } = ex;
  return {
    /**
     * The organizations among `orgIds`, with their plan's usage quotas, and with `withBlocked`
     * every organization that is blocked now.
     */
    meteredOrganizations: async (
      orgIds: readonly string[],
      withBlocked: boolean,
    ): Promise<MeteredOrganization[]> => {
      const base = () =>
        db
          .selectFrom("organizations as o")
          .leftJoin("plans as p", "p.name", "o.plan")
          .select([
            "o.id",
            "o.plan",
            "o.overages",
            "o.blocked_reads",
            "o.blocked_writes",
            "p.rows_read",
            "p.rows_written",
            "p.storage_bytes",
          ]);
      const out = new Map<string, MeteredOrganization>();
      const add = (rows: MeteredOrganization[]) => {
        for (const row of rows) out.set(row.id, row);
      };
      if (withBlocked) {
        add(
          await base()
            .where((eb) => eb.or([eb("o.blocked_reads", "=", 1), eb("o.blocked_writes", "=", 1)]))
            .execute(),
        );
      }
      for (let i = 0; i < orgIds.length; i += ID_CHUNK) {
        add(
          await base()
            .where("o.id", "in", orgIds.slice(i, i + ID_CHUNK))
            .execute(),
        );
      }
      return [...out.values()];
    },

    lockOrganization: async (orgId: string) => {
      if (dialect.kind === "postgres") {
        await sql`select id from organizations where id = ${orgId} for update`.execute(db);
      }
    },
  };
}

/** What an organization holds against its plan. */
function planHoldings(ex: Executor) {
  const { db } = ex;
  const count = async (q: Promise<{ n: number | string | bigint } | undefined>) => Number((await q)?.n ?? 0);
  return {
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

    /**
     * How many of `what` the organization holds, counting no further than `limit`: a quota check
     * only needs to know whether the cap is reached, and counting every row would make each create
     * slower as an organization grows.
     */
    holdingUpTo: async (orgId: string, what: keyof OrgHoldings, limit: number): Promise<number> => {
      if (what !== "locations") {
        // Kept on the organization's row by triggers: one read, however many there are.
        const row = await db
          .selectFrom("organizations")
          .select(what === "databases" ? "database_count as n" : "group_count as n")
          .where("id", "=", orgId)
          .executeTakeFirst();
        return Number(row?.n ?? 0);
      }
      return count(
        db
          .selectFrom(
            db
              .selectFrom("group_locations as l")
              .innerJoin("groups as g", "g.id", "l.group_id")
              .select("l.location as k")
              .distinct()
              .where("g.org_id", "=", orgId)
              .limit(limit)
              .as("t"),
          )
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirst(),
      );
    },

    /** Whether one of the organization's groups already has the location. */
    usesLocation: async (orgId: string, location: string) =>
      (await db
        .selectFrom("group_locations as l")
        .innerJoin("groups as g", "g.id", "l.group_id")
        .select("l.location")
        .where("g.org_id", "=", orgId)
        .where("l.location", "=", location)
        .executeTakeFirst()) !== undefined,
  };
}

export function plansRepo(ex: Executor) {
  return { ...planRows(ex), ...planMetering(ex), ...planHoldings(ex) };
}

export type PlansRepo = ReturnType<typeof plansRepo>;
