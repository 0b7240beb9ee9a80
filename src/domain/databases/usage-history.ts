import { requireDatabase } from "../core/access-tx.js";
import { parseTime } from "./database-usage.js";
import { databaseErrors } from "./errors.js";
import type { DatabaseCtx } from "./ports.js";

/** Longest period one request may ask for, in days. */
export const MAX_HISTORY_DAYS = 366;
const DAY_MS = 86_400_000;

export interface UsageDay {
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  rowsRead: number;
  rowsWritten: number;
  queries: number;
  /** Size of the primary at the end of the day (now, for today); null before any was recorded. */
  storageBytes: number | null;
}

export interface UsageHistory {
  dbId: string;
  from: string;
  to: string;
  days: UsageDay[];
}

const dayOf = (t: Date) => t.toISOString().slice(0, 10);

/**
 * A database's usage per UTC day between `from` and `to` (RFC 3339; default the last 30 days),
 * one entry for every day, zeros included, so a chart needs no gap filling. Days before the
 * database existed are left out. Storage is the size recorded after each day's last write,
 * carried over days without writes; today's is measured now.
 */
export async function getUsageHistory(
  ctx: DatabaseCtx,
  slug: string,
  name: string,
  range: { from?: string; to?: string },
): Promise<UsageHistory> {
  const now = ctx.deps.clock();
  const to = parseTime("to", range.to, now);
  const from = parseTime("from", range.from, new Date(to.getTime() - 29 * DAY_MS));
  if (from > to) throw databaseErrors.periodReversed();
  if (to.getTime() - from.getTime() > MAX_HISTORY_DAYS * DAY_MS) {
    throw databaseErrors.periodTooLong(MAX_HISTORY_DAYS);
  }
  const { db } = await ctx.deps.store.read((r) => requireDatabase(r, ctx.actor, slug, name, "read"));
  await ctx.deps.meter.flush();
  const created = dayOf(new Date(db.created_at));
  const first = dayOf(from) < created ? created : dayOf(from);
  const last = dayOf(to);
  const [rows, before] = await ctx.deps.store.read(async (r) =>
    Promise.all([r.usage.daily(db.id, first, last), r.usage.storageBefore(db.id, first)]),
  );
  const byDay = new Map(rows.map((row) => [row.day, row]));
  const today = dayOf(now);
  const days: UsageDay[] = [];
  let storage = before;
  for (let t = Date.parse(`${first}T00:00:00Z`); dayOf(new Date(t)) <= last; t += DAY_MS) {
    const day = dayOf(new Date(t));
    const row = byDay.get(day);
    storage = row?.storage_bytes ?? storage;
    if (day === today) storage = ctx.deps.files.sizeOf(db.primary_location, db.id);
    days.push({
      day,
      rowsRead: row?.rows_read ?? 0,
      rowsWritten: row?.rows_written ?? 0,
      queries: row?.queries ?? 0,
      storageBytes: storage,
    });
  }
  return { dbId: db.id, from: from.toISOString(), to: to.toISOString(), days };
}
