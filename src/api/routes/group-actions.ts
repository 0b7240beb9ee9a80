import { z } from "@hono/zod-openapi";
import { transferGroup } from "../../domain/databases/transfers.js";
import {
  getGroupConfiguration,
  renameGroup,
  unarchiveGroup,
  updateGroupConfiguration,
  updateGroupVersion,
} from "../../domain/groups/group-actions.js";
import { GroupParams, optional } from "../params.js";
import { type Route, route } from "../route.js";
import { GroupWire, groupWire } from "../wire/group.js";

const tags = ["Groups"];
const notFound = { 404: "group not found" };
const base = "/v1/organizations/{organizationName}/groups/{groupName}";

const ConfigurationWire = z
  .object({
    delete_protection: z
      .boolean()
      .openapi({ description: "While on, the group (and so its databases with it) can't be deleted." }),
  })
  .openapi("GroupConfiguration");

/** Body of a transfer: the target organization's slug (`org` is what the turso CLI's `db-transfer` sends). */
export const TransferBody = z.object({
  organization: optional(z.string()).openapi({
    description: "Slug of the target organization.",
    example: "acme",
  }),
  org: optional(z.string()).openapi({
    description: "The same, as the turso CLI's `org db-transfer` sends it.",
  }),
});

export const groupActionRoutes: Route[] = [
  route({
    method: "get",
    path: `${base}/configuration`,
    summary: "Retrieve a group's configuration",
    tags,
    params: GroupParams,
    response: ConfigurationWire,
    errors: notFound,
    handler: async ({ ctx, params }) => {
      const c = await getGroupConfiguration(ctx, params.organizationName, params.groupName);
      return { delete_protection: c.deleteProtection };
    },
  }),
  route({
    method: "patch",
    path: `${base}/configuration`,
    summary: "Update a group's configuration",
    description: "An absent or null `delete_protection` stays as it is.",
    tags,
    params: GroupParams,
    body: z.object({ delete_protection: optional(z.boolean()) }),
    response: ConfigurationWire,
    errors: { 400: "A field of the wrong type.", ...notFound },
    handler: async ({ ctx, params, body }) => {
      const c = await updateGroupConfiguration(ctx, params.organizationName, params.groupName, {
        deleteProtection: body.delete_protection,
      });
      return { delete_protection: c.deleteProtection };
    },
  }),
  route({
    method: "post",
    path: `${base}/rename`,
    summary: "Rename a group",
    description:
      'The turso CLI sends `{"Name": "<new name>"}`; keys match without case. Database hostnames (`<db>-<org>`) don\'t name the group and stay as they are; group tokens and group-scoped API tokens keep working.',
    tags,
    params: GroupParams,
    body: z.object({ name: z.string().openapi({ example: "production" }) }),
    response: z.object({ group: GroupWire }),
    errors: { 400: "An invalid name.", 409: "group already exists", ...notFound },
    handler: async ({ ctx, params, body }) => ({
      group: groupWire(
        await renameGroup(ctx, params.organizationName, params.groupName, body.name),
        ctx.deps.version,
      ),
    }),
  }),
  route({
    method: "post",
    path: `${base}/transfer`,
    summary: "Transfer a group to another organization",
    description:
      "Moves the group with all its databases to `organization` (a slug); the caller must be an owner or admin of both. Database names must be free there, and hostnames change with the organization (`<db>-<new org>`). SQL tokens of the group and its databases stop working, and API tokens restricted to the group are revoked: mint new ones in the target. No data is copied. The answer is the bare group, as Turso's specification has it.",
    tags,
    params: GroupParams,
    body: TransferBody,
    response: GroupWire,
    errors: {
      400: "The target organization is unknown or not administered by the caller, or a database is tied to one that stays behind.",
      402: "The target's plan has no room for the group.",
      403: "only organization admins or owners can transfer groups",
      409: "The group's name or a database name is taken in the target.",
      ...notFound,
    },
    handler: async ({ ctx, params, body }) =>
      groupWire(
        await transferGroup(
          ctx,
          params.organizationName,
          params.groupName,
          body.organization ?? body.org ?? "",
        ),
        ctx.deps.version,
      ),
  }),
  route({
    method: "post",
    path: `${base}/unarchive`,
    summary: "Unarchive a group",
    description:
      "Clears the group's `archived` flag (and its databases' `archived`/`sleeping`). Shoal never archives idle groups by itself, so this is usually a no-op; it is still recorded in the audit log.",
    tags,
    params: GroupParams,
    response: z.object({ group: GroupWire }),
    errors: notFound,
    handler: async ({ ctx, params }) => ({
      group: groupWire(
        await unarchiveGroup(ctx, params.organizationName, params.groupName),
        ctx.deps.version,
      ),
    }),
  }),
  route({
    method: "post",
    path: `${base}/update`,
    summary: "Update a group's databases to the latest libSQL",
    description:
      "Every Shoal database always runs the libSQL engine bundled with the running Shoal, so there is nothing to upgrade: the call is recorded in the audit log and answers `{}` at once. The old CLI's `Version`/`Extensions` keys are accepted and ignored.",
    tags,
    params: GroupParams,
    body: z.object({
      version: optional(z.string()),
      extensions: optional(z.union([z.string(), z.array(z.string())])),
    }),
    response: z.object({}),
    errors: notFound,
    handler: async ({ ctx, params }) => {
      await updateGroupVersion(ctx, params.organizationName, params.groupName);
      return {};
    },
  }),
];
