import { z } from "@hono/zod-openapi";
import { addGroupLocation, removeGroupLocation } from "../../domain/groups/group-locations.js";
import { createGroup, deleteGroup, getGroup, listGroups } from "../../domain/groups/groups.js";
import {
  GroupParams,
  groupParam,
  locationParam,
  OrgParams,
  optional,
  orgParam,
  PageQuery,
  PaginationWire,
} from "../params.js";
import { type Route, route } from "../route.js";
import { GroupWire, groupWire } from "../wire/group.js";
import { groupActionRoutes } from "./group-actions.js";

const tags = ["Groups"];
const Wrapped = z.object({ group: GroupWire });
const LocationParams = z.object({
  organizationName: orgParam,
  groupName: groupParam,
  location: locationParam,
});

export const groupRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/groups",
    summary: "List groups",
    tags,
    description:
      "Groups by name. With `limit`, one page at a time: pass `pagination.next` as `cursor` for the next page until it is null.",
    params: OrgParams,
    query: PageQuery,
    response: z.object({ groups: z.array(GroupWire), pagination: PaginationWire }),
    handler: async ({ ctx, params, query }) => {
      const page = await listGroups(ctx, params.organizationName, query);
      return {
        groups: page.items.map((g) => groupWire(g, ctx.deps.version)),
        pagination: { next: page.next },
      };
    },
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/groups",
    summary: "Create a group",
    description:
      "`location` becomes the primary location of every database in the group; when omitted, the first location of the catalogue is used. `extensions` is accepted for compatibility: every libSQL extension Shoal ships is always available.",
    tags,
    params: OrgParams,
    body: z.object({
      name: z.string().openapi({ example: "default" }),
      location: optional(z.string()).openapi({ example: "aws-us-east-1" }),
      extensions: optional(z.union([z.string(), z.array(z.string())])),
      version: optional(z.string()),
    }),
    response: Wrapped,
    errors: { 400: "invalid location: <code>, or an invalid name", 409: "group already exists" },
    idempotent: true,
    handler: async ({ ctx, params, body }) => ({
      group: groupWire(
        await createGroup(ctx, params.organizationName, { name: body.name, location: body.location }),
        ctx.deps.version,
      ),
    }),
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/groups/{groupName}",
    summary: "Retrieve a group",
    tags,
    params: GroupParams,
    response: Wrapped,
    errors: { 404: "group not found" },
    handler: async ({ ctx, params }) => ({
      group: groupWire(await getGroup(ctx, params.organizationName, params.groupName), ctx.deps.version),
    }),
  }),
  route({
    method: "delete",
    path: "/v1/organizations/{organizationName}/groups/{groupName}",
    summary: "Delete a group",
    description: "Deletes the group and every database in it, with their files.",
    tags,
    params: GroupParams,
    response: Wrapped,
    errors: {
      400: "The group or one of its databases is protected against deletion.",
      404: "group not found",
    },
    handler: async ({ ctx, params }) => ({
      group: groupWire(await deleteGroup(ctx, params.organizationName, params.groupName), ctx.deps.version),
    }),
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/groups/{groupName}/locations/{location}",
    summary: "Add a location to a group",
    description:
      "Every database of the group gets an instance in the location, and databases created later get one too. Adding a location the group already has changes nothing (safe to retry). No body.",
    tags,
    params: LocationParams,
    response: Wrapped,
    errors: { 400: "invalid location: <code>", 404: "group not found" },
    handler: async ({ ctx, params }) => ({
      group: groupWire(
        await addGroupLocation(ctx, params.organizationName, params.groupName, params.location),
        ctx.deps.version,
      ),
    }),
  }),
  route({
    method: "delete",
    path: "/v1/organizations/{organizationName}/groups/{groupName}/locations/{location}",
    summary: "Remove a location from a group",
    description:
      "Removes the location's instances of every database in the group. The primary location can't be removed.",
    tags,
    params: LocationParams,
    response: Wrapped,
    errors: { 400: "cannot remove primary location, or invalid location: <code>", 404: "group not found" },
    handler: async ({ ctx, params }) => ({
      group: groupWire(
        await removeGroupLocation(ctx, params.organizationName, params.groupName, params.location),
        ctx.deps.version,
      ),
    }),
  }),
  ...groupActionRoutes,
];
