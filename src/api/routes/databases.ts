import { z } from "@hono/zod-openapi";
import { createDatabase, deleteDatabase, getDatabase, listDatabases } from "../../domain/databases.js";
import { InvalidError } from "../../errors.js";
import { DatabaseParams, OrgParams, optional, PageQuery, PaginationWire } from "../params.js";
import { type Route, route } from "../route.js";
import { CreatedDatabaseWire, DatabaseWire, databaseWire } from "../wire/database.js";

const tags = ["Databases"];

const CreateBody = z.object({
  name: z.string().openapi({
    description: "Lowercase letters, digits and dashes; at most 64 characters.",
    example: "my-db",
  }),
  group: optional(z.string()).openapi({
    description: "Group to create the database in (default `default`).",
    example: "default",
  }),
  location: optional(z.string()).openapi({
    description: "Sent by the turso CLI; when set, a location of the group.",
  }),
  size_limit: optional(z.union([z.string(), z.number()])).openapi({
    description: "Bytes, or a unit such as 256mb or 1gb.",
  }),
  seed: optional(z.record(z.string(), z.unknown())),
  is_schema: optional(z.boolean()),
  schema: optional(z.string()),
});

export const databaseRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/databases",
    summary: "List databases",
    tags,
    params: OrgParams,
    description:
      "Databases by name. With `limit`, one page at a time: pass `pagination.next` as `cursor` for the next page until it is null.",
    query: PageQuery.extend({
      group: optional(z.string()).openapi({ description: "Only databases of this group." }),
      parent: optional(z.string()).openapi({ description: "Only branches of this database (id or name)." }),
      schema: optional(z.string()).openapi({ description: "Only databases following this schema database." }),
      type: optional(z.enum(["schema"])).openapi({ description: "`schema`: only schema databases." }),
    }),
    response: z.object({ databases: z.array(DatabaseWire), pagination: PaginationWire }),
    handler: async ({ ctx, params, query }) => {
      const page = await listDatabases(
        ctx,
        params.organizationName,
        {
          group: query.group,
          parent: query.parent,
          schema: query.schema,
          schemasOnly: query.type === "schema",
        },
        { limit: query.limit, cursor: query.cursor },
      );
      return {
        databases: page.items.map((d) => databaseWire(d, ctx.deps.version)),
        pagination: { next: page.next },
      };
    },
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/databases",
    summary: "Create a database",
    description:
      "Creates a database in a group, with a libSQL database file in every location of the group. The body is read as JSON whatever its content type, and keys match without case.",
    tags,
    params: OrgParams,
    body: CreateBody,
    response: z.object({ database: CreatedDatabaseWire }),
    errors: {
      400: "group not found, or an invalid name or field",
      409: "database with name <name> already exists",
    },
    idempotent: true,
    handler: async ({ ctx, params, body }) => {
      if (body.seed !== undefined) throw new InvalidError("seeding a new database is not supported yet");
      if (body.is_schema === true || body.schema) {
        throw new InvalidError("schema databases (is_schema/schema) are not supported yet");
      }
      const d = await createDatabase(ctx, params.organizationName, {
        name: body.name,
        group: body.group,
        location: body.location,
        sizeLimit: body.size_limit === undefined ? undefined : String(body.size_limit),
      });
      return { database: { DbId: d.id, Hostname: d.hostname, Name: d.name } };
    },
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}",
    summary: "Retrieve a database",
    tags,
    params: DatabaseParams,
    response: z.object({ database: DatabaseWire }),
    errors: { 404: "could not find database with name <name>: record not found" },
    handler: async ({ ctx, params }) => ({
      database: databaseWire(
        await getDatabase(ctx, params.organizationName, params.databaseName),
        ctx.deps.version,
      ),
    }),
  }),
  route({
    method: "delete",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}",
    summary: "Delete a database",
    description: "Deletes the database and the files of all its instances.",
    tags,
    params: DatabaseParams,
    response: z.object({ database: z.string() }),
    errors: {
      400: "The database is protected against deletion.",
      404: "could not find database with name <name>: record not found",
    },
    handler: async ({ ctx, params }) => {
      await deleteDatabase(ctx, params.organizationName, params.databaseName);
      return { database: params.databaseName };
    },
  }),
];
