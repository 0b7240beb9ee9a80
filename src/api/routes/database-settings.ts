import { z } from "@hono/zod-openapi";
import {
  type DatabaseConfiguration,
  getDatabaseConfiguration,
  updateDatabaseConfiguration,
} from "../../domain/databases/database-config.js";
import { getDatabaseUsage, getTopQueries, type UsageFigures } from "../../domain/databases/database-usage.js";
import { DatabaseParams, optional } from "../params.js";
import { type Route, route } from "../route.js";

const tags = ["Databases"];
const notFound = { 404: "could not find database with name <name>: record not found" };

const ConfigurationWire = z
  .object({
    size_limit: z
      .string()
      .openapi({ description: "Largest size, e.g. `256mb`; `0` means no limit.", example: "256mb" }),
    allow_attach: z
      .boolean()
      .openapi({ description: "Whether other databases' tokens may ATTACH this one." }),
    block_reads: z.boolean(),
    block_writes: z.boolean(),
    delete_protection: z.boolean(),
    allowed_ips: z.array(z.string()).openapi({
      description: "Addresses and CIDR blocks whose clients the data plane serves; empty serves everyone.",
      example: ["203.0.113.0/24"],
    }),
    allowed_aws_vpc_ids: z
      .array(z.string())
      .openapi({ description: "Always empty: Shoal has no AWS PrivateLink endpoints." }),
  })
  .openapi("DatabaseConfiguration");

const configurationWire = (c: DatabaseConfiguration): z.infer<typeof ConfigurationWire> => ({
  size_limit: c.sizeLimit ?? "0",
  allow_attach: c.allowAttach,
  block_reads: c.blockReads,
  block_writes: c.blockWrites,
  delete_protection: c.deleteProtection,
  allowed_ips: c.allowedIps,
  allowed_aws_vpc_ids: [],
});

const UsageWire = z.object({
  rows_read: z.number(),
  rows_written: z.number(),
  storage_bytes: z.number(),
  bytes_synced: z.number(),
});
const usageWire = (u: UsageFigures) => ({
  rows_read: u.rowsRead,
  rows_written: u.rowsWritten,
  storage_bytes: u.storageBytes,
  bytes_synced: u.bytesSynced,
});

export const databaseSettingsRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/configuration",
    summary: "Retrieve a database's configuration",
    tags,
    params: DatabaseParams,
    response: ConfigurationWire,
    errors: notFound,
    handler: async ({ ctx, params }) =>
      configurationWire(await getDatabaseConfiguration(ctx, params.organizationName, params.databaseName)),
  }),
  route({
    method: "patch",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/configuration",
    summary: "Update a database's configuration",
    description:
      "Absent or null fields stay as they are (the turso CLI sends nulls). The data plane applies a change from the next statement: blocked reads or writes fail with `BLOCKED`, a write that would grow the database past `size_limit` fails with `SQLITE_FULL`, and a client whose address is not in a non-empty `allowed_ips` is refused with 403 `IP_NOT_ALLOWED`.",
    tags,
    params: DatabaseParams,
    body: z.object({
      size_limit: optional(z.union([z.string(), z.number()])).openapi({
        description: 'Bytes or a unit (`256mb`); `0` or `""` removes the limit.',
      }),
      allow_attach: optional(z.boolean()),
      block_reads: optional(z.boolean()),
      block_writes: optional(z.boolean()),
      delete_protection: optional(z.boolean()),
      // Unlike the flags, an explicit null list clears it, as Turso's server does.
      allowed_ips: z
        .array(z.string())
        .nullish()
        .transform((v) => (v === null ? [] : v))
        .openapi({
          description:
            "Replaces the allowlist: IPv4 or IPv6 addresses and CIDR blocks. `[]` or `null` serves every address again; absent leaves it as it is.",
        }),
      allowed_aws_vpc_ids: optional(z.array(z.string())).openapi({
        description: "Only `[]` is accepted: Shoal has no AWS PrivateLink endpoints.",
      }),
    }),
    response: ConfigurationWire,
    errors: { 400: "An invalid size_limit or a field of the wrong type.", ...notFound },
    handler: async ({ ctx, params, body }) =>
      configurationWire(
        await updateDatabaseConfiguration(ctx, params.organizationName, params.databaseName, {
          sizeLimit: body.size_limit === undefined ? undefined : String(body.size_limit),
          allowAttach: body.allow_attach,
          blockReads: body.block_reads,
          blockWrites: body.block_writes,
          deleteProtection: body.delete_protection,
          allowedIps: body.allowed_ips,
          allowedAwsVpcIds: body.allowed_aws_vpc_ids,
        }),
      ),
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/usage",
    summary: "Retrieve a database's usage",
    description:
      "Rows read and written between `from` and `to` (RFC 3339; default the current calendar month, counted per UTC day), and the storage used now. The total is under both `usage` (what the clients read) and `total` (the specification's name).",
    tags,
    params: DatabaseParams,
    query: z.object({
      from: optional(z.string()).openapi({ example: "2026-11-01T00:00:00Z" }),
      to: optional(z.string()).openapi({ example: "2026-11-30T23:59:59Z" }),
    }),
    response: z.object({
      database: z.object({
        uuid: z.string(),
        instances: z.array(z.object({ uuid: z.string(), usage: UsageWire })),
        usage: UsageWire,
        total: UsageWire,
      }),
    }),
    errors: {
      400: 'Turso\'s wording, e.g. invalid from parameter: parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"',
      ...notFound,
    },
    handler: async ({ ctx, params, query }) => {
      const u = await getDatabaseUsage(ctx, params.organizationName, params.databaseName, query);
      return {
        database: {
          uuid: u.dbId,
          instances: u.instances.map((i) => ({ uuid: i.uuid, usage: usageWire(i.usage) })),
          usage: usageWire(u.total),
          total: usageWire(u.total),
        },
      };
    },
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/stats",
    summary: "Retrieve a database's top queries",
    description: "The statements that read and wrote the most rows, with how often they ran.",
    tags,
    params: DatabaseParams,
    response: z.object({
      top_queries: z
        .array(
          z.object({ query: z.string(), rows_read: z.number(), rows_written: z.number(), count: z.number() }),
        )
        .nullable(),
    }),
    errors: notFound,
    handler: async ({ ctx, params }) => {
      const top = await getTopQueries(ctx, params.organizationName, params.databaseName);
      return {
        top_queries: top.map((q) => ({
          query: q.query,
          rows_read: q.rowsRead,
          rows_written: q.rowsWritten,
          count: q.count,
        })),
      };
    },
  }),
];
