import { z } from "@hono/zod-openapi";
import { failoverGroup } from "../../domain/groups/failover.js";
import { GroupParams } from "../params.js";
import { type Route, route } from "../route.js";

export const failoverRoutes: Route[] = [
  route({
    method: "post",
    path: "/v1/admin/groups/{organizationName}/{groupName}/failover",
    summary: "Fail a group over to another location",
    description:
      "Instance administrators only (Turso has no equivalent). Makes `location`, another location of the group, the primary of every database in the group. The node holding that location runs it (the call is forwarded there): it takes the next epoch of the group's primary lease, valid from the moment the old primary's lease runs out, so the old primary stops accepting writes before the new one starts; the replicas there become the primaries, and the call answers once they accept writes (at most `SHOAL_PRIMARY_LEASE_MS` after the old primary's last renewal). Writes the old primary acknowledged that hadn't reached that location's replica are lost; the old primary, when it comes back, discards them and follows the new one.",
    tags: ["Instance administration"],
    params: GroupParams,
    body: z.object({
      location: z.string().openapi({ description: "The new primary location.", example: "aws-eu-west-1" }),
    }),
    response: z.object({
      group: z.string(),
      primary: z.string().openapi({ example: "aws-eu-west-1" }),
      epoch: z.number().openapi({ description: "The lease's new fencing epoch.", example: 2 }),
      valid_from: z.string().openapi({ description: "When the new primary started accepting writes." }),
      databases: z.number().openapi({ description: "Databases whose primary moved." }),
    }),
    errors: {
      400: "invalid location: <code>, or location <code> is not part of group <group>",
      403: "Only the instance administrator fails groups over.",
      404: "organization not found, or group not found",
      409: "location <code> is already the primary of group <group>",
      503: "the node holding the location can't be reached",
    },
    handler: async ({ ctx, params, body }) => {
      const done = await failoverGroup(ctx, params.organizationName, params.groupName, body.location);
      return {
        group: done.group,
        primary: done.primary,
        epoch: done.epoch,
        valid_from: done.validFrom,
        databases: done.databases,
      };
    },
  }),
];
