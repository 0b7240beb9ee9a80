import { derivedUuid } from "../../lib/ids.js";
import { parseRfc3339 } from "../../lib/rfc3339.js";
import { requireDatabase } from "../core/access-tx.js";
import { databaseErrors } from "./errors.js";
import type { DatabaseCtx } from "./ports.js";

export interface UsageFigures {
  rowsRead: number;
  rowsWritten: number;
  storageBytes: number;
  /** Bytes sent to replicas and embedded replicas; counted once replication exists. */
  bytesSynced: number;
}

export interface DatabaseUsage {
  dbId: string;
  instances: Array<{ uuid: string; location: string; usage: UsageFigures }>;
  total: UsageFigures;
}

export interface TopQuery {
  query: string;
  count: number;
  rowsRead: number;
  rowsWritten: number;
}

/** A `from`/`to` query parameter; a bad one gets Turso's message (Go's time parser's wording). */
export function parseTime(name: string, text: string | undefined, fallback: Date): Date {
  if (text === undefined || text === "") return fallback;
  const t = parseRfc3339(text);
  if (!t.ok) throw databaseErrors.invalidTime(name, t.error);
  return t.date;
}

/**
 * Usage of one database between `from` and `to` (default: the current calendar month, UTC).
 * Rows are counted per UTC day, so the period is widened to whole days. Storage is measured now.
 */
export async function getDatabaseUsage(
  ctx: DatabaseCtx,
  slug: string,
  name: string,
  range: { from?: string; to?: string },
): Promise<DatabaseUsage> {
  const now = ctx.deps.clock();
  const from = parseTime("from", range.from, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)));
  const to = parseTime("to", range.to, now);
  if (from > to) throw databaseErrors.periodReversed();
  const { db } = await ctx.deps.store.read((r) => requireDatabase(r, ctx.actor, slug, name, "read"));
  await ctx.deps.meter.flush();
  const [totals, locations] = await ctx.deps.store.read(async (r) =>
    Promise.all([
      r.usage.totalsFor(db.id, from.toISOString().slice(0, 10), to.toISOString().slice(0, 10)),
      r.groups.locationsOf([db.group_id]),
    ]),
  );
  const instances = (locations.get(db.group_id) ?? []).map((location) => {
    const primary = location === db.primary_location;
    return {
      uuid: derivedUuid(db.id, location),
      location,
      usage: {
        // Every statement runs on the primary, so its counts are the instance's counts.
        rowsRead: primary ? totals.rows_read : 0,
        rowsWritten: primary ? totals.rows_written : 0,
        storageBytes: ctx.deps.files.sizeOf(location, db.id),
        bytesSynced: 0,
      },
    };
  });
  const primary = instances.find((i) => i.location === db.primary_location);
  return {
    dbId: db.id,
    instances,
    total: {
      rowsRead: totals.rows_read,
      rowsWritten: totals.rows_written,
      storageBytes: primary?.usage.storageBytes ?? 0,
      bytesSynced: 0,
    },
  };
}

/** The database's most expensive statements, by rows read plus rows written. */
export async function getTopQueries(
  ctx: DatabaseCtx,
  slug: string,
  name: string,
  limit = 10,
): Promise<TopQuery[]> {
  const { db } = await ctx.deps.store.read((r) => requireDatabase(r, ctx.actor, slug, name, "read"));
  await ctx.deps.meter.flush();
  const rows = await ctx.deps.store.read((r) => r.usage.topQueries(db.id, limit));
  return rows.map((q) => ({
    query: q.query,
    count: Number(q.count),
    rowsRead: Number(q.rows_read),
    rowsWritten: Number(q.rows_written),
  }));
}

/**
 * `GET .../usage/queries?from=`: the statements that read and wrote the most rows. Shoal keeps
 * running totals per statement, not per period, so `from` is checked but the figures cover the
 * database's whole life.
 */
export async function getQueryStats(
  ctx: DatabaseCtx,
  slug: string,
  name: string,
  from: string | undefined,
): Promise<TopQuery[]> {
  parseTime("from", from, ctx.deps.clock());
  return getTopQueries(ctx, slug, name, 100);
}
