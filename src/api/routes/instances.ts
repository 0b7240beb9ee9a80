import { z } from "@hono/zod-openapi";
import { getInstance, type Instance, listInstances } from "../../domain/database-instances.js";
import { waitForLocation } from "../../domain/group-locations.js";
import {
  DatabaseParams,
  databaseParam,
  groupParam,
  locationParam,
  optional,
  orgParam,
  pathParam,
} from "../params.js";
import { type Route, route } from "../route.js";

const InstanceWire = z
  .object({
    uuid: z.string(),
    name: z.string().openapi({ description: "The location code.", example: "aws-eu-west-1" }),
    type: z.enum(["primary", "replica"]),
    region: z.string(),
    hostname: z.string().openapi({ example: "my-db-acme.aws-eu-west-1.localhost" }),
  })
  .openapi("Instance");
const instanceWire = (i: Instance): z.infer<typeof InstanceWire> => ({ ...i });

/** How long `.../wait` waits before answering 503. */
const WAIT_MS = 30_000;

export const instanceRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/instances",
    summary: "List a database's instances",
    description: "The primary, and a replica in every other location of the database's group.",
    tags: ["Databases"],
    params: DatabaseParams,
    response: z.object({ instances: z.array(InstanceWire) }),
    errors: { 404: "could not find database with name <name>: record not found" },
    handler: async ({ ctx, params }) => ({
      instances: (await listInstances(ctx, params.organizationName, params.databaseName)).map(instanceWire),
    }),
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/instances/{instanceName}",
    summary: "Retrieve an instance",
    tags: ["Databases"],
    params: z.object({
      organizationName: orgParam,
      databaseName: databaseParam,
      instanceName: pathParam("instanceName", "The instance's location code (or its uuid).", "aws-eu-west-1"),
    }),
    response: z.object({ instance: InstanceWire }),
    errors: { 404: "instance <name> not found" },
    handler: async ({ ctx, params }) => ({
      instance: instanceWire(
        await getInstance(ctx, params.organizationName, params.databaseName, params.instanceName),
      ),
    }),
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/groups/{groupName}/locations/{location}/wait",
    summary: "Wait until a location has caught up",
    description: `Answers once every replica of the group's databases in the location has everything committed when the call was made (at once for the primary location). 503 after ${WAIT_MS / 1000} seconds.`,
    tags: ["Groups"],
    params: z.object({ organizationName: orgParam, groupName: groupParam, location: locationParam }),
    query: z.object({
      timeout: optional(z.coerce.number().int().min(1).max(600)).openapi({
        description: "Seconds to wait (default 30).",
      }),
    }),
    response: z.object({}),
    errors: {
      400: "The location is not part of the group.",
      404: "group not found",
      503: "The replicas did not catch up in time.",
    },
    handler: async ({ ctx, params, query }) => {
      await waitForLocation(
        ctx,
        params.organizationName,
        params.groupName,
        params.location,
        (query.timeout ?? WAIT_MS / 1000) * 1000,
      );
      return {};
    },
  }),
];
