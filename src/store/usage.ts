import { sql } from "kysely";
import type { Executor } from "./executor.js";

export interface UsageDelta {
  dbId: string;
  orgId: string;
  day: string;
  rowsRead: number;
  rowsWritten: number;
  queries: number;
  /** Size of the primary measured after these writes; absent when not measured. */
  storageBytes?: number;
}

export interface QueryStatsDelta {
  dbId: string;
  query: string;
  count: number;
  rowsRead: number;
  rowsWritten: number;
  totalMs: number;
}

export interface UsageTotals {
  rows_read: number;
  rows_written: number;
  queries: number;
}

export interface DailyUsage extends UsageTotals {
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  storage_bytes: number | null;
}

export interface MonthlyTotals extends UsageTotals {
  /** `YYYY-MM`. */
  month: string;
}

const totals = (r: { rows_read: unknown; rows_written: unknown; queries: unknown }): UsageTotals => ({
  rows_read: Number(r.rows_read),
  rows_written: Number(r.rows_written),
  queries: Number(r.queries),
});

/** Adding counted usage. */
function usageWrites({ db }: Executor) {
  return {
    /** Adds counters to each (database, day) row, creating it on first use. */
    add: async (deltas: readonly UsageDelta[]) => {
      for (const d of deltas) {
        await db
          .insertInto("usage_daily")
          .values({
            db_id: d.dbId,
            org_id: d.orgId,
            day: d.day,
            rows_read: d.rowsRead,
            rows_written: d.rowsWritten,
            queries: d.queries,
            storage_bytes: d.storageBytes ?? null,
          })
          .onConflict((oc) =>
            oc.columns(["db_id", "day"]).doUpdateSet({
              rows_read: sql`usage_daily.rows_read + excluded.rows_read`,
              rows_written: sql`usage_daily.rows_written + excluded.rows_written`,
              queries: sql`usage_daily.queries + excluded.queries`,
              storage_bytes: sql`coalesce(excluded.storage_bytes, usage_daily.storage_bytes)`,
            }),
          )
          .execute();
      }
    },

    /** Adds per-query counters; statistics of databases deleted in the meantime are dropped. */
    addQueryStats: async (deltas: readonly QueryStatsDelta[]) => {
      if (deltas.length === 0) return;
      const ids = [...new Set(deltas.map((d) => d.dbId))];
      const live = new Set(
        (await db.selectFrom("databases").select("id").where("id", "in", ids).execute()).map((r) => r.id),
      );
      for (const d of deltas) {
        if (!live.has(d.dbId)) continue;
        await db
          .insertInto("query_stats")
          .values({
            db_id: d.dbId,
            query: d.query,
            count: d.count,
            rows_read: d.rowsRead,
            rows_written: d.rowsWritten,
            total_ms: d.totalMs,
          })
          .onConflict((oc) =>
            oc.columns(["db_id", "query"]).doUpdateSet({
              count: sql`query_stats.count + excluded.count`,
              rows_read: sql`query_stats.rows_read + excluded.rows_read`,
              rows_written: sql`query_stats.rows_written + excluded.rows_written`,
              total_ms: sql`query_stats.total_ms + excluded.total_ms`,
            }),
          )
          .execute();
      }
    },
  };
}

/** One database's usage: totals, days, storage and top queries. */
function databaseUsage({ db }: Executor) {
  return {
    /** Totals of one database over the UTC days `fromDay` to `toDay`, inclusive. */
    totalsFor: async (dbId: string, fromDay: string, toDay: string): Promise<UsageTotals> => {
      const r = await db
        .selectFrom("usage_daily")
        .select((eb) => [
          eb.fn.coalesce(eb.fn.sum<number>("rows_read"), sql<number>`0`).as("rows_read"),
          eb.fn.coalesce(eb.fn.sum<number>("rows_written"), sql<number>`0`).as("rows_written"),
          eb.fn.coalesce(eb.fn.sum<number>("queries"), sql<number>`0`).as("queries"),
        ])
        .where("db_id", "=", dbId)
        .where("day", ">=", fromDay)
        .where("day", "<=", toDay)
        .executeTakeFirstOrThrow();
      return {
        rows_read: Number(r.rows_read),
        rows_written: Number(r.rows_written),
        queries: Number(r.queries),
      };
    },

    /** One database's rows per UTC day from `fromDay` to `toDay`, inclusive, oldest first. */
    daily: async (dbId: string, fromDay: string, toDay: string): Promise<DailyUsage[]> => {
      const rows = await db
        .selectFrom("usage_daily")
        .select(["day", "rows_read", "rows_written", "queries", "storage_bytes"])
        .where("db_id", "=", dbId)
        .where("day", ">=", fromDay)
        .where("day", "<=", toDay)
        .orderBy("day")
        .execute();
      return rows.map((r) => ({
        day: r.day,
        ...totals(r),
        storage_bytes: r.storage_bytes === null ? null : Number(r.storage_bytes),
      }));
    },

    /** The last storage size recorded for a database before the UTC day `day`; null if none. */
    storageBefore: async (dbId: string, day: string): Promise<number | null> => {
      const r = await db
        .selectFrom("usage_daily")
        .select("storage_bytes")
        .where("db_id", "=", dbId)
        .where("day", "<", day)
        .where("storage_bytes", "is not", null)
        .orderBy("day", "desc")
        .limit(1)
        .executeTakeFirst();
      return r?.storage_bytes == null ? null : Number(r.storage_bytes);
    },

    /** The most expensive queries of a database (by rows read and written). */
    topQueries: (dbId: string, limit: number) =>
      db
        .selectFrom("query_stats")
        .selectAll()
        .where("db_id", "=", dbId)
        .orderBy(sql`rows_read + rows_written`, "desc")
        .orderBy("count", "desc")
        .limit(limit)
        .execute(),
  };
}

/** An organization's usage: totals, per database and per month. */
function organizationUsage({ db }: Executor) {
  const sums = () =>
    db
      .selectFrom("usage_daily")
      .select((eb) => [
        eb.fn.coalesce(eb.fn.sum<number>("rows_read"), sql<number>`0`).as("rows_read"),
        eb.fn.coalesce(eb.fn.sum<number>("rows_written"), sql<number>`0`).as("rows_written"),
        eb.fn.coalesce(eb.fn.sum<number>("queries"), sql<number>`0`).as("queries"),
      ]);
  return {
    /**
     * Totals of an organization over the UTC days `fromDay` to `toDay`, inclusive, counting
     * databases deleted since (what they used still counts against the month).
     */
    orgTotals: async (orgId: string, fromDay: string, toDay: string): Promise<UsageTotals> =>
      totals(
        await sums()
          .where("org_id", "=", orgId)
          .where("day", ">=", fromDay)
          .where("day", "<=", toDay)
          .executeTakeFirstOrThrow(),
      ),

    /** The same per database, by database id. */
    orgTotalsByDatabase: async (orgId: string, fromDay: string, toDay: string) =>
      new Map(
        (
          await sums()
            .select("db_id")
            .where("org_id", "=", orgId)
            .where("day", ">=", fromDay)
            .where("day", "<=", toDay)
            .groupBy("db_id")
            .execute()
        ).map((r) => [r.db_id, totals(r)] as const),
      ),

    /** An organization's totals per calendar month (UTC) that had any usage, newest first. */
    orgMonthlyTotals: async (orgId: string): Promise<MonthlyTotals[]> => {
      const month = sql<string>`substr(day, 1, 7)`;
      const rows = await sums()
        .select(month.as("month"))
        .where("org_id", "=", orgId)
        .groupBy(month)
        .orderBy(month, "desc")
        .execute();
      return rows.map((r) => ({ month: r.month, ...totals(r) }));
    },
  };
}

export function usageRepo(ex: Executor) {
  return { ...usageWrites(ex), ...databaseUsage(ex), ...organizationUsage(ex) };
}

export type UsageRepo = ReturnType<typeof usageRepo>;
