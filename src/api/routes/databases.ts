import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type CreateDatabaseInput, createDatabase } from "../../domain/databases/create-database.js";
import { deleteDatabase, getDatabase, listDatabases } from "../../domain/databases/databases.js";
import { DATABASE_NOT_FOUND } from "../documented-errors.js";
import type { AppEnv } from "../env.js";
import { FORWARDED_HEADER } from "../forward.js";
import { callerOrigin } from "../origin.js";
import { DatabaseParams, OrgParams, optional, PageQuery, PaginationWire } from "../params.js";
import { type Route, route } from "../route.js";
import { CreatedDatabaseWire, createdDatabaseWire, DatabaseWire, databaseWire } from "../wire/database.js";

const tags = ["Databases"];

const SeedBody = z
  .object({
    type: optional(z.string()).openapi({
      description:
        "`database`: a copy (branch) of another database of the organization, now or at `timestamp`; `dump`: run a SQL dump uploaded to `POST .../databases/dumps`; `database_upload`: the database waits for a SQLite file uploaded to `POST https://<hostname>/v1/upload` (data plane).",
      example: "database",
    }),
    name: optional(z.string()).openapi({
      description: "For `database`: the database to copy.",
      example: "my-db",
    }),
    value: optional(z.string()).openapi({ description: "The same as `name` (the turso CLI sends this)." }),
    url: optional(z.string()).openapi({
      description: "For `dump`: the `dump_url` returned by the dump upload. Other URLs are refused.",
    }),
    timestamp: optional(z.string()).openapi({
      description:
        "For `database`: an RFC 3339 time; the copy is the source as of its last commit at or before it (point-in-time restore), within the kept history.",
      example: "2026-05-01T12:00:00Z",
    }),
  })
  .openapi("DatabaseSeed", { description: "Where the new database's first content comes from." });

export const CreateBody = z.object({
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
  seed: optional(SeedBody),
  is_schema: optional(z.boolean()).openapi({
    description:
      "Make this a schema database: others can follow its schema (`schema`), and DDL run on it reaches them.",
  }),
  schema: optional(z.string()).openapi({
    description:
      "Name of a schema database of the organization: the new database starts with its schema and follows its schema changes. Not with `is_schema` or `seed`.",
  }),
  group_id: optional(z.string()).openapi({
    description:
      "The group's id (`uuid` in group answers), as `@tursodatabase/api` sends `groupId`; instead of `group`, or with it for the same group.",
  }),
  image: optional(z.string()).openapi({
    description:
      "Accepted and ignored: Shoal runs the one libSQL it bundles (Turso's `latest`/`canary` images don't apply).",
  }),
  extensions: optional(z.unknown()).openapi({
    description: "Accepted and ignored: every extension Shoal ships is always available.",
  }),
  use_tursodb: optional(z.boolean()).openapi({
    description:
      "Only `false` is accepted: Shoal runs libSQL, not the Turso Database engine (400 for `true`).",
  }),
  // Checked by the domain, so a wrong type gets the same clear 400 as a wrong key.
  remote_encryption: optional(z.unknown()).openapi({
    description:
      "`{encryption_key, encryption_cipher}`: encrypt the database at rest with this key (cipher `aes256cbc`). A branch or point-in-time restore of an encrypted database must bring its source's key. Not with `is_schema` or `schema`.",
  }),
});

/** A create's body as the domain takes it (v1 and v3 send the same body). */
export function createInput(body: z.infer<typeof CreateBody>, c: Context<AppEnv>): CreateDatabaseInput {
  return {
    name: body.name,
    group: body.group,
    location: body.location,
    sizeLimit: body.size_limit === undefined ? undefined : String(body.size_limit),
    seed: body.seed,
    isSchema: body.is_schema,
    schema: body.schema,
    remoteEncryption: body.remote_encryption,
    groupId: body.group_id,
    useTursoDb: body.use_tursodb,
    // On a call another node forwarded, the address the caller used is in X-Forwarded-Host.
    host: (c.req.header(FORWARDED_HEADER) && c.req.header("x-forwarded-host")) || c.req.header("host"),
  };
}

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
      search: optional(z.string().max(64)).openapi({
        description: "Only databases whose name contains this text, without regard to case (Shoal only).",
      }),
    }),
    response: z.object({ databases: z.array(DatabaseWire), pagination: PaginationWire }),
    handler: async ({ ctx, params, query, c }) => {
      const page = await listDatabases(
        ctx,
        params.organizationName,
        {
          group: query.group,
          parent: query.parent,
          schema: query.schema,
          schemasOnly: query.type === "schema",
          search: query.search,
        },
        { limit: query.limit, cursor: query.cursor },
      );
      return {
        databases: page.items.map((d) => databaseWire(d, ctx.deps.version, callerOrigin(c))),
        pagination: { next: page.next },
      };
    },
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/databases",
    summary: "Create a database",
    description:
      "Creates a database in a group, with a libSQL database file in every location of the group: empty, seeded (a branch or point-in-time restore of another database, a SQL dump, or a file uploaded afterwards through the data plane), or following a schema database. A create that fails leaves nothing behind. The body is read as JSON whatever its content type, and keys match without case.",
    tags,
    params: OrgParams,
    body: CreateBody,
    response: z.object({ database: CreatedDatabaseWire }),
    errors: {
      400: "group not found, an invalid name or field, an unknown seed type, a seed timestamp outside the kept history, a dump that fails, or a dump URL that isn't this server's",
      402: "The organization's plan allows no more databases (branches and restores count).",
      404: "The seed's source database or the schema database doesn't exist in the organization.",
      409: "database with name <name> already exists",
    },
    idempotent: true,
    handler: async ({ ctx, params, body, c }) => {
      const d = await createDatabase(ctx, params.organizationName, createInput(body, c));
      return { database: createdDatabaseWire(d) };
    },
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}",
    summary: "Retrieve a database",
    tags,
    params: DatabaseParams,
    response: z.object({ database: DatabaseWire }),
    errors: DATABASE_NOT_FOUND,
    handler: async ({ ctx, params, c }) => ({
      database: databaseWire(
        await getDatabase(ctx, params.organizationName, params.databaseName),
        ctx.deps.version,
        callerOrigin(c),
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
      400: "The database is protected against deletion, or is a schema database that others still follow.",
      ...DATABASE_NOT_FOUND,
    },
    handler: async ({ ctx, params }) => {
      await deleteDatabase(ctx, params.organizationName, params.databaseName);
      return { database: params.databaseName };
    },
  }),
];
