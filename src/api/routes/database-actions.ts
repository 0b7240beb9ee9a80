import { z } from "@hono/zod-openapi";
import { updateDatabaseVersion, wakeDatabase } from "../../domain/databases/database-actions.js";
import { getQueryStats } from "../../domain/databases/database-usage.js";
import { transferDatabase } from "../../domain/databases/transfers.js";
import { callerOrigin } from "../origin.js";
import { DatabaseParams, optional } from "../params.js";
import { type Route, route } from "../route.js";
import { DatabaseWire, databaseWire } from "../wire/database.js";
import { TransferBody } from "./group-actions.js";

const tags = ["Databases"];
const notFound = { 404: "could not find database with name <name>: record not found" };
const base = "/v1/organizations/{organizationName}/databases/{databaseName}";

const QueryStatWire = z
  .object({ query: z.string(), rows_read: z.number(), rows_written: z.number() })
  .openapi("QueryStatistics");

export const databaseActionRoutes: Route[] = [
  route({
    method: "post",
    path: `${base}/update`,
    summary: "Update a database to the latest libSQL",
    description:
      "Every Shoal database always runs the libSQL engine bundled with the running Shoal, so there is nothing to upgrade: the call is recorded in the audit log and answers `{}` at once.",
    tags,
    params: DatabaseParams,
    response: z.object({}),
    errors: notFound,
    handler: async ({ ctx, params }) => {
      await updateDatabaseVersion(ctx, params.organizationName, params.databaseName);
      return {};
    },
  }),
  route({
    method: "post",
    path: `${base}/wakeup`,
    summary: "Wake up (unarchive) a database",
    description:
      "A database is archived with its group, so this unarchives the group. Shoal never archives idle groups by itself, so this is usually a no-op; it is still recorded in the audit log.",
    tags,
    params: DatabaseParams,
    response: z.object({}),
    errors: notFound,
    handler: async ({ ctx, params }) => {
      await wakeDatabase(ctx, params.organizationName, params.databaseName);
      return {};
    },
  }),
  route({
    method: "post",
    path: `${base}/transfer`,
    summary: "Transfer a database to another organization",
    description:
      "Moves the database to the organization `org` (or `organization`); the caller must be an owner or admin of both. It lands in the target's group of the same name, which is created with the same locations when missing; an existing one must have the same primary location. The hostname changes to `<db>-<new org>`, and the database's SQL tokens stop working.",
    tags,
    params: DatabaseParams,
    body: TransferBody,
    response: z.object({ database: DatabaseWire }),
    errors: {
      400: "The target organization is unknown or not administered by the caller, or its group of that name has another primary location.",
      402: "The target's plan has no room for the database.",
      403: "only organization admins or owners can transfer databases",
      409: "The name or hostname is taken in the target.",
      ...notFound,
    },
    handler: async ({ ctx, params, body, c }) => ({
      database: databaseWire(
        await transferDatabase(
          ctx,
          params.organizationName,
          params.databaseName,
          body.organization ?? body.org ?? "",
        ),
        ctx.deps.version,
        callerOrigin(c),
      ),
    }),
  }),
  route({
    method: "get",
    path: `${base}/usage/queries`,
    summary: "List a database's most expensive queries",
    description:
      "A bare array of the statements that read and wrote the most rows (at most 100), as `turso db inspect --queries` reads it. Shoal keeps running totals per statement, so `from` is checked (RFC 3339) but the figures cover the database's whole life.",
    tags,
    params: DatabaseParams,
    query: z.object({ from: optional(z.string()).openapi({ example: "2026-11-01T00:00:00Z" }) }),
    response: z.array(QueryStatWire),
    errors: { 400: "invalid from parameter: parsing time ...", ...notFound },
    handler: async ({ ctx, params, query }) =>
      (await getQueryStats(ctx, params.organizationName, params.databaseName, query.from)).map((q) => ({
        query: q.query,
        rows_read: q.rowsRead,
        rows_written: q.rowsWritten,
      })),
  }),
];
