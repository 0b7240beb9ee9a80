import { z } from "@hono/zod-openapi";
import type { Database } from "../../domain/views.js";

/**
 * Turso's Database object. The key casing is mixed on purpose (Go's PascalCase for `Name`, `DbId`,
 * `Hostname`, camelCase `primaryRegion`, snake_case elsewhere), and fields the latest spec dropped
 * are still sent because the official clients read them (`sleeping`, `type`, `version`, ...).
 */
export const DatabaseWire = z
  .object({
    Name: z.string().openapi({ example: "my-db" }),
    DbId: z.string().openapi({ example: "0eb771dd-6906-11ee-8553-eaa7715aeaf2" }),
    Hostname: z.string().openapi({ example: "my-db-acme.localhost" }),
    regions: z.array(z.string()),
    primaryRegion: z.string(),
    group: z.string(),
    type: z.literal("logical"),
    database_type: z.literal("libsql"),
    version: z.string(),
    block_reads: z.boolean(),
    block_writes: z.boolean(),
    allow_attach: z.boolean(),
    delete_protection: z.boolean(),
    is_schema: z.boolean(),
    schema: z.string(),
    archived: z.boolean(),
    sleeping: z.boolean(),
    parent: z.null(),
  })
  .openapi("Database");

export function databaseWire(d: Database, version: string): z.infer<typeof DatabaseWire> {
  return {
    Name: d.name,
    DbId: d.id,
    Hostname: d.hostname,
    regions: d.locations,
    primaryRegion: d.primaryLocation,
    group: d.group,
    type: "logical",
    database_type: "libsql",
    version,
    block_reads: d.blockReads,
    block_writes: d.blockWrites,
    allow_attach: d.allowAttach,
    delete_protection: d.deleteProtection,
    is_schema: false,
    schema: "",
    archived: false,
    sleeping: false,
    parent: null,
  };
}

export const CreatedDatabaseWire = z
  .object({ DbId: z.string(), Hostname: z.string(), Name: z.string() })
  .openapi("CreatedDatabase");
