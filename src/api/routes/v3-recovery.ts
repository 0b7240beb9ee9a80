import { z } from "@hono/zod-openapi";
import { type DeletedDatabase, restoreDatabase } from "../../domain/databases/restore.js";
import { listDeletedGroups, restoreGroup } from "../../domain/databases/restore-group.js";
import type { Database } from "../../domain/databases/views.js";
import { callerOrigin } from "../origin.js";
import { DatabaseIdParams, GroupIdParams, OrgIdParams, optional, V3PaginationWire } from "../params.js";
import { type Route, route } from "../route.js";
import { DatabaseV3Wire, databaseV3Wire } from "../wire/database.js";
import { GroupWire, groupWire } from "../wire/group.js";

/*
 * Recovering deleted databases and groups (Turso's v3 recovery routes): a deleted database is kept
 * restorable for SHOAL_DELETED_RETENTION_HOURS unless its organization turned keeping off
 * (domain/databases/restore.ts). The list of deleted databases is v3's list with `deleted=true`
 * (v3.ts).
 */

const tags = ["v3"];
const NOT_MEMBER = {
  403: "The organization doesn't exist, the caller isn't a member of it, or isn't an owner or admin.",
};

/** A database in a recovery answer: v3's shape, with when it was deleted (null once restored). */
export const RecoveredDatabaseWire = DatabaseV3Wire.extend({
  deleted_at: z
    .string()
    .nullable()
    .openapi({ description: "When it was deleted; null for a restored database." }),
  group_deleted_at: z
    .string()
    .nullable()
    .openapi({ description: "When its group was deleted, taking it along; null otherwise." }),
}).openapi("DatabaseV3Deleted");

export function deletedDatabaseWire(d: DeletedDatabase, version: string, origin: string) {
  return {
    ...databaseV3Wire(d, version, origin),
    deleted_at: d.deletedAt,
    group_deleted_at: d.groupDeletedAt,
  };
}

function restoredWire(d: Database, version: string, origin: string) {
  return { ...databaseV3Wire(d, version, origin), deleted_at: null, group_deleted_at: null };
}

const DeletedGroupWire = z
  .object({
    uuid: z.string(),
    name: z.string(),
    deleted_at: z.string(),
    cascade_databases: z.number().int().openapi({ description: "How many databases were deleted with it." }),
  })
  .openapi("DeletedGroup");

export const v3RecoveryRoutes: Route[] = [
  route({
    method: "post",
    path: "/v3/organizations/{organizationId}/databases/{databaseId}/restore",
    summary: "Restore a deleted database (v3)",
    description:
      'Brings back a deleted database exactly as it was when deleted (rows, history, settings, encryption), under its old name or `{"name": "<new name>"}`. Tokens minted before the deletion stay refused: mint new ones. Owners and admins, while the organization keeps deleted databases.',
    tags,
    params: DatabaseIdParams,
    body: z.object({
      name: optional(z.string()).openapi({ description: "A new name (default: the old one)." }),
    }),
    response: z.object({ database: RecoveredDatabaseWire }),
    errors: {
      400: "An invalid name.",
      402: "The organization's plan allows no more databases.",
      ...NOT_MEMBER,
      404: "No deleted database with this id can be restored (never deleted here, or its time is over).",
      409: "The name is taken, its group was deleted (restore the group), or recovery is turned off.",
    },
    handler: async ({ ctx, params, body, c }) => {
      const d = await restoreDatabase(ctx, { id: params.organizationId }, params.databaseId, {
        ...(body.name !== undefined ? { name: body.name } : {}),
      });
      return { database: restoredWire(d, ctx.deps.version, callerOrigin(c)) };
    },
  }),
  route({
    method: "get",
    path: "/v3/organizations/{organizationId}/deleted-groups",
    summary: "List deleted groups (v3)",
    description:
      "Groups deleted within the retention window, newest first, with how many databases went with each.",
    tags,
    params: OrgIdParams,
    response: z.object({ groups: z.array(DeletedGroupWire), pagination: V3PaginationWire }),
    errors: NOT_MEMBER,
    handler: async ({ ctx, params }) => ({
      groups: (await listDeletedGroups(ctx, { id: params.organizationId })).map((g) => ({
        uuid: g.id,
        name: g.name,
        deleted_at: g.deletedAt,
        cascade_databases: g.cascadeDatabases,
      })),
      pagination: {},
    }),
  }),
  route({
    method: "post",
    path: "/v3/organizations/{organizationId}/groups/{groupId}/restore",
    summary: "Restore a deleted group (v3)",
    description:
      "Brings back a deleted group with its locations, then every database deleted with it. The group comes back even if some of its databases can't; `failures` maps their ids to why, to restore them one by one.",
    tags,
    params: GroupIdParams,
    response: z.object({
      group: GroupWire,
      databases: z.array(RecoveredDatabaseWire),
      failures: z.record(z.string(), z.string()),
    }),
    errors: {
      ...NOT_MEMBER,
      402: "The organization's plan allows no more groups.",
      404: "No deleted group with this id can be restored.",
      409: "A group of that name exists, or recovery is turned off.",
    },
    handler: async ({ ctx, params, c }) => {
      const r = await restoreGroup(ctx, { id: params.organizationId }, params.groupId);
      const origin = callerOrigin(c);
      return {
        group: groupWire(r.group, ctx.deps.version),
        databases: r.databases.map((d) => restoredWire(d, ctx.deps.version, origin)),
        failures: r.failures,
      };
    },
  }),
];
