import { z } from "@hono/zod-openapi";
import {
  createInstance,
  deleteInstance,
  getInstance,
  type Instance,
  listInstances,
  waitForInstance,
} from "../../domain/databases/database-instances.js";
import { waitForLocation } from "../../domain/groups/group-locations.js";
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

const WaitQuery = z.object({
  timeout: optional(z.coerce.number().int().min(1).max(600)).openapi({
    description: "Seconds to wait (default 30).",
  }),
});

const InstanceParams = z.object({
  organizationName: orgParam,
  databaseName: databaseParam,
  instanceName: pathParam("instanceName", "The instance's location code (or its uuid).", "aws-eu-west-1"),
});

/** How long a wait call waits: its `timeout` (seconds), or the default. */
const waitMsOf = (query: { timeout?: number }) => (query.timeout ?? WAIT_MS / 1000) * 1000;

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
    params: InstanceParams,
    response: z.object({ instance: InstanceWire }),
    errors: { 404: "could not find instance <name> of database <db>" },
    handler: async ({ ctx, params }) => ({
      instance: instanceWire(
        await getInstance(ctx, params.organizationName, params.databaseName, params.instanceName),
      ),
    }),
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/instances",
    summary: "Create an instance (legacy)",
    description:
      'From before groups; the turso CLI sends `{"Location": "<code>"}`. Instances follow their group\'s locations, so this adds the location to the database\'s group (it needs `group:configure` as well as `db:configure`): every database of the group gets an instance there. A location the group already has changes nothing.',
    tags: ["Databases"],
    params: DatabaseParams,
    body: z.object({ location: optional(z.string()).openapi({ example: "aws-eu-west-1" }) }),
    response: z.object({ instance: InstanceWire }),
    errors: {
      400: "location is required, or invalid location: <code>",
      404: "could not find database with name <name>: record not found",
    },
    handler: async ({ ctx, params, body }) => ({
      instance: instanceWire(
        await createInstance(ctx, params.organizationName, params.databaseName, body.location ?? ""),
      ),
    }),
  }),
  route({
    method: "delete",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/instances/{instanceName}",
    summary: "Delete an instance (legacy)",
    description:
      "Locations belong to the group, so an instance can only be deleted on its own while its database is the only one in the group: the location then leaves the group. Otherwise the answer is a 400 that says to remove the location from the group. The primary instance is never deleted (delete the database instead).",
    tags: ["Databases"],
    params: InstanceParams,
    response: z.object({ instance: InstanceWire }),
    errors: {
      400: "The primary instance, or a location other databases of the group use.",
      404: "could not find instance <name> of database <db>",
    },
    handler: async ({ ctx, params }) => ({
      instance: instanceWire(
        await deleteInstance(ctx, params.organizationName, params.databaseName, params.instanceName),
      ),
    }),
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/instances/{instanceName}/wait",
    summary: "Wait until an instance has caught up (legacy)",
    description: `Answers once the instance has everything its primary had committed when the call was made (at once for the primary). 503 after ${WAIT_MS / 1000} seconds.`,
    tags: ["Databases"],
    params: InstanceParams,
    query: WaitQuery,
    response: z.object({}),
    errors: {
      404: "could not find instance <name> of database <db>",
      503: "The instance did not catch up in time.",
    },
    handler: async ({ ctx, params, query }) => {
      await waitForInstance(
        ctx,
        params.organizationName,
        params.databaseName,
        params.instanceName,
        waitMsOf(query),
      );
      return {};
    },
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/groups/{groupName}/locations/{location}/wait",
    summary: "Wait until a location has caught up",
    description: `Answers once every replica of the group's databases in the location has everything committed when the call was made (at once for the primary location). 503 after ${WAIT_MS / 1000} seconds.`,
    tags: ["Groups"],
    params: z.object({ organizationName: orgParam, groupName: groupParam, location: locationParam }),
    query: WaitQuery,
    response: z.object({}),
    errors: {
      400: "The location is not part of the group.",
      404: "group not found",
      503: "The replicas did not catch up in time.",
    },
    handler: async ({ ctx, params, query }) => {
      await waitForLocation(ctx, params.organizationName, params.groupName, params.location, waitMsOf(query));
      return {};
    },
  }),
];
