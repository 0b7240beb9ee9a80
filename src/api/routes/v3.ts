import { z } from "@hono/zod-openapi";
import { mintDatabaseToken, mintGroupToken } from "../../domain/data-access/db-tokens.js";
import { createDatabase } from "../../domain/databases/create-database.js";
import { deleteDatabase, getDatabase, listDatabases } from "../../domain/databases/databases.js";
import { listDeletedDatabases } from "../../domain/databases/restore.js";
import { getGroup, listGroups } from "../../domain/groups/groups.js";
import { callerOrigin } from "../origin.js";
import {
  DatabaseIdParams,
  GroupIdParams,
  OrgIdParams,
  optional,
  V3_DEFAULT_LIMIT,
  V3PageQuery,
  V3PaginationWire,
  v3Pagination,
} from "../params.js";
import { type Route, route } from "../route.js";
import { DatabaseV3Wire, databaseV3Wire } from "../wire/database.js";
import { GroupWire, groupWire } from "../wire/group.js";
import { Jwt, TokenBody, TokenQuery, tokenErrors, tokenRequest } from "./database-tokens.js";
import { CreateBody, createInput } from "./databases.js";
import { deletedDatabaseWire, RecoveredDatabaseWire } from "./v3-recovery.js";

/*
 * Turso's v3 API addresses organizations, groups and databases by id rather than by name. Every
 * route here is a v1 operation reached by id: the same domain function, resolved by id in the same
 * transaction (domain/core/ref.ts), with v3's shapes. What v3 lacks (settings, instances, usage,
 * locations) stays on v1, as the turso CLI expects.
 */

const tags = ["v3"];
const byId = (id: string) => ({ id });
const NOT_MEMBER = { 403: "The organization doesn't exist or the caller isn't a member of it." };
const DB_NOT_FOUND = { ...NOT_MEMBER, 404: "No database with this id in the organization." };
const GROUP_NOT_FOUND = { ...NOT_MEMBER, 404: "group not found" };

const ListQuery = V3PageQuery.extend({
  group_id: optional(z.string()).openapi({ description: "Only databases of the group with this id." }),
  parent_db_id: optional(z.string()).openapi({ description: "Only branches of the database with this id." }),
  deleted: optional(z.enum(["true", "false"])).openapi({
    description:
      "`true`: deleted databases that can still be restored, newest first, with `deleted_at` and `group_deleted_at` (`parent_db_id` doesn't apply).",
  }),
});

export const v3Routes: Route[] = [
  route({
    method: "get",
    path: "/v3/organizations/{organizationId}/databases",
    summary: "List databases (v3)",
    description:
      "Databases by name, a page at a time: pass `pagination.next` as `cursor` until `next` is absent. Pages stay correct while databases are created and deleted between them (the cursor is the last name seen).",
    tags,
    params: OrgIdParams,
    query: ListQuery,
    response: z.object({
      databases: z.array(z.union([RecoveredDatabaseWire, DatabaseV3Wire])),
      pagination: V3PaginationWire,
    }),
    errors: { 400: "A limit out of range or a cursor Shoal didn't make.", ...NOT_MEMBER },
    handler: async ({ ctx, params, query, c }) => {
      if (query.deleted === "true") {
        const deleted = await listDeletedDatabases(
          ctx,
          byId(params.organizationId),
          { ...(query.group_id ? { groupId: query.group_id } : {}) },
          { limit: query.limit ?? V3_DEFAULT_LIMIT, cursor: query.cursor },
        );
        return {
          databases: deleted.items.map((d) => deletedDatabaseWire(d, ctx.deps.version, callerOrigin(c))),
          pagination: v3Pagination(deleted.next),
        };
      }
      const page = await listDatabases(
        ctx,
        byId(params.organizationId),
        { groupId: query.group_id, parent: query.parent_db_id },
        { limit: query.limit ?? V3_DEFAULT_LIMIT, cursor: query.cursor },
      );
      return {
        databases: page.items.map((d) => databaseV3Wire(d, ctx.deps.version, callerOrigin(c))),
        pagination: v3Pagination(page.next),
      };
    },
  }),
  route({
    method: "post",
    path: "/v3/organizations/{organizationId}/databases",
    summary: "Create a database (v3)",
    description:
      "As v1's create, with the group given by `group_id` (or `group`). A branch (`seed.type` `database`, its source named in `seed.value` or `seed.name`) that names no group goes to its source's group.",
    tags,
    params: OrgIdParams,
    body: CreateBody,
    response: z.object({ database: DatabaseV3Wire }),
    errors: {
      400: "group not found, an invalid name or field, or a seed that can't be used",
      402: "The organization's plan allows no more databases.",
      ...NOT_MEMBER,
      404: "The seed's source database doesn't exist in the organization.",
      409: "database with name <name> already exists",
    },
    idempotent: true,
    handler: async ({ ctx, params, body, c }) => {
      const input = { ...createInput(body, c), branchInSourceGroup: true };
      const d = await createDatabase(ctx, byId(params.organizationId), input);
      return { database: databaseV3Wire(d, ctx.deps.version, callerOrigin(c)) };
    },
  }),
  route({
    method: "get",
    path: "/v3/organizations/{organizationId}/databases/{databaseId}",
    summary: "Retrieve a database (v3)",
    description: "The database with its access settings (`delete_protection`, `allow_rules_config`).",
    tags,
    params: DatabaseIdParams,
    response: z.object({ database: DatabaseV3Wire }),
    errors: DB_NOT_FOUND,
    handler: async ({ ctx, params, c }) => ({
      database: databaseV3Wire(
        await getDatabase(ctx, byId(params.organizationId), byId(params.databaseId)),
        ctx.deps.version,
        callerOrigin(c),
      ),
    }),
  }),
  route({
    method: "delete",
    path: "/v3/organizations/{organizationId}/databases/{databaseId}",
    summary: "Delete a database (v3)",
    description: "Deletes the database and the files of all its instances. The answer names it.",
    tags,
    params: DatabaseIdParams,
    response: z.object({ database: z.string().openapi({ description: "The deleted database's name." }) }),
    errors: {
      400: "The database is protected against deletion, or is a schema database that others still follow.",
      ...DB_NOT_FOUND,
    },
    handler: async ({ ctx, params }) => ({
      database: await deleteDatabase(ctx, byId(params.organizationId), byId(params.databaseId)),
    }),
  }),
  route({
    method: "post",
    path: "/v3/organizations/{organizationId}/databases/{databaseId}/auth/tokens",
    summary: "Create a database token (v3)",
    description: "As v1's: a token for this database's data plane.",
    tags,
    params: DatabaseIdParams,
    query: TokenQuery,
    body: TokenBody,
    response: Jwt,
    errors: { ...tokenErrors, ...DB_NOT_FOUND },
    handler: async ({ ctx, params, query, body }) => ({
      jwt: await mintDatabaseToken(
        ctx,
        byId(params.organizationId),
        byId(params.databaseId),
        tokenRequest(query, body),
      ),
    }),
  }),
  route({
    method: "get",
    path: "/v3/organizations/{organizationId}/groups",
    summary: "List groups (v3)",
    description: "Groups by name, a page at a time as databases are.",
    tags,
    params: OrgIdParams,
    query: V3PageQuery,
    response: z.object({ groups: z.array(GroupWire), pagination: V3PaginationWire }),
    errors: NOT_MEMBER,
    handler: async ({ ctx, params, query }) => {
      const page = await listGroups(ctx, byId(params.organizationId), {
        limit: query.limit ?? V3_DEFAULT_LIMIT,
        cursor: query.cursor,
      });
      return {
        groups: page.items.map((g) => groupWire(g, ctx.deps.version)),
        pagination: v3Pagination(page.next),
      };
    },
  }),
  route({
    method: "get",
    path: "/v3/organizations/{organizationId}/groups/{groupId}",
    summary: "Retrieve a group (v3)",
    tags,
    params: GroupIdParams,
    response: z.object({ group: GroupWire }),
    errors: GROUP_NOT_FOUND,
    handler: async ({ ctx, params }) => ({
      group: groupWire(
        await getGroup(ctx, byId(params.organizationId), byId(params.groupId)),
        ctx.deps.version,
      ),
    }),
  }),
  route({
    method: "post",
    path: "/v3/organizations/{organizationId}/groups/{groupId}/auth/tokens",
    summary: "Create a group token (v3)",
    description: "As v1's: a token that opens every database of the group, including later ones.",
    tags,
    params: GroupIdParams,
    query: TokenQuery,
    body: TokenBody,
    response: Jwt,
    errors: { ...tokenErrors, ...GROUP_NOT_FOUND },
    handler: async ({ ctx, params, query, body }) => ({
      jwt: await mintGroupToken(
        ctx,
        byId(params.organizationId),
        byId(params.groupId),
        tokenRequest(query, body),
      ),
    }),
  }),
];
