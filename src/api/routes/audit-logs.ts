import { z } from "@hono/zod-openapi";
import { listAuditLogs } from "../../domain/accounts/audit-log.js";
import { OrgParams, optional } from "../params.js";
import { type Route, route } from "../route.js";

const AuditLogWire = z
  .object({
    code: z.string().openapi({ example: "db-create" }),
    message: z.string(),
    origin: z.string().openapi({ description: "`cli`, `web` or `api`, from the caller's User-Agent." }),
    author: z.string().openapi({ description: "Username of the caller." }),
    created_at: z.string(),
    data: z.record(z.string(), z.unknown()),
  })
  .openapi("AuditLog");

export const auditLogRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/audit-logs",
    summary: "List the audit log",
    description:
      "Every change made in the organization, newest first, written in the same transaction as the change. Owners and admins only. Page with `page` and `page_size`, or like every other list with `limit` and `cursor` set to `pagination.next`; narrow with `code` and `author`.",
    tags: ["Audit logs"],
    params: OrgParams,
    query: z.object({
      page_size: optional(z.coerce.number().int()).openapi({
        description: "Entries per page, 1 to 1000 (default 100).",
      }),
      limit: optional(z.coerce.number().int()).openapi({
        description: "The same as `page_size`, as the other lists spell it.",
        example: 50,
      }),
      page: optional(z.coerce.number().int()).openapi({ description: "Page number, from 1." }),
      cursor: optional(z.string()).openapi({ description: "`pagination.next` of the previous page." }),
      code: optional(z.string().max(100)).openapi({
        description: "Only entries with this code, e.g. `db-create` (Shoal only).",
      }),
      author: optional(z.string().max(100)).openapi({
        description: "Only entries by this username (Shoal only).",
      }),
    }),
    response: z.object({
      audit_logs: z.array(AuditLogWire),
      pagination: z.object({
        page: z.number(),
        page_size: z.number(),
        total_pages: z.number(),
        total_rows: z.number(),
        next: z.string().nullable(),
      }),
    }),
    errors: {
      400: "Invalid page, page_size, limit or cursor, or page_size and limit that disagree.",
      403: "Not an owner or admin.",
    },
    handler: async ({ ctx, params, query }) => {
      const p = await listAuditLogs(ctx, params.organizationName, {
        page: query.page,
        pageSize: query.page_size,
        limit: query.limit,
        cursor: query.cursor,
        code: query.code || undefined,
        author: query.author || undefined,
      });
      return {
        audit_logs: p.entries.map((e) => ({
          code: e.code,
          message: e.message,
          origin: e.origin,
          author: e.author,
          created_at: e.createdAt,
          data: e.data,
        })),
        pagination: {
          page: p.page,
          page_size: p.pageSize,
          total_pages: p.totalPages,
          total_rows: p.totalRows,
          next: p.next,
        },
      };
    },
  }),
];
