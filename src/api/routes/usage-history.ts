import { z } from "@hono/zod-openapi";
import { getUsageHistory, MAX_HISTORY_DAYS } from "../../domain/databases/usage-history.js";
import { DatabaseParams, optional } from "../params.js";
import { type Route, route } from "../route.js";

const DayWire = z.object({
  day: z.string().openapi({ description: "The UTC day, `YYYY-MM-DD`.", example: "2026-11-05" }),
  usage: z.object({
    rows_read: z.number(),
    rows_written: z.number(),
    storage_bytes: z.number().nullable().openapi({
      description:
        "Size of the primary after the day's last write (carried over days without writes; now, for today). Null before any size was recorded.",
    }),
    bytes_synced: z.number(),
    queries: z.number().openapi({ description: "Statements run that day." }),
  }),
});

/**
 * A Shoal extension: Turso's API answers usage totals for one period only, and a chart needs one
 * figure per day. Each day's figures use the names of Turso's database usage object.
 */
export const usageHistoryRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/usage/daily",
    summary: "Retrieve a database's usage per day",
    description: `Rows read, rows written, queries and storage for every UTC day between \`from\` and \`to\` (RFC 3339; default the last 30 days; at most ${MAX_HISTORY_DAYS} days), days without activity included, days before the database existed left out. Shoal only.`,
    tags: ["Databases"],
    params: DatabaseParams,
    query: z.object({
      from: optional(z.string()).openapi({ example: "2026-11-01T00:00:00Z" }),
      to: optional(z.string()).openapi({ example: "2026-11-30T23:59:59Z" }),
    }),
    response: z.object({
      database: z.object({
        uuid: z.string(),
        from: z.string(),
        to: z.string(),
        days: z.array(DayWire),
      }),
    }),
    errors: {
      400: 'A malformed `from` or `to` (Turso\'s wording: invalid from parameter: parsing time "x" as ...), `from` after `to`, or a period over the maximum.',
      404: "could not find database with name <name>: record not found",
    },
    handler: async ({ ctx, params, query }) => {
      const h = await getUsageHistory(ctx, params.organizationName, params.databaseName, query);
      return {
        database: {
          uuid: h.dbId,
          from: h.from,
          to: h.to,
          days: h.days.map((d) => ({
            day: d.day,
            usage: {
              rows_read: d.rowsRead,
              rows_written: d.rowsWritten,
              storage_bytes: d.storageBytes,
              bytes_synced: 0,
              queries: d.queries,
            },
          })),
        },
      };
    },
  }),
];
