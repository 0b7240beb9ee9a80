import { z } from "@hono/zod-openapi";
import type { Database } from "../../domain/databases/views.js";

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
    http_url: z.string().openapi({
      description:
        "Shoal only: the database's URL by path on the address this answer was asked on, for clients where `Hostname` doesn't resolve (no wildcard DNS). Use it as `@libsql/client`'s `url` (HTTP, trailing slash kept).",
      example: "http://127.0.0.1:8080/db/acme/my-db/",
    }),
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
    is_schema: z.boolean().openapi({ description: "Whether other databases follow this one's schema." }),
    schema: z
      .string()
      .openapi({ description: 'Name of the schema database this one follows; `""` for none.' }),
    archived: z.boolean().openapi({
      description: "Whether the database's group is archived (`POST .../groups/{g}/unarchive` clears it).",
    }),
    sleeping: z.boolean().openapi({ description: "The same as `archived`; older clients read this name." }),
    parent: z
      .object({
        id: z.string(),
        name: z.string().nullable().openapi({
          description: "Null once the source database is deleted or no longer in this organization.",
        }),
        branched_at: z.string().nullable(),
      })
      .nullable()
      .openapi({ description: "For a branch, the database it was made from; null otherwise." }),
    encryption_cipher: z.string().optional().openapi({
      description:
        "Only on a database encrypted at rest with its owner's key (`remote_encryption` on create): the cipher, `aes256cbc`. The turso CLI shows it as `Encryption:`.",
      example: "aes256cbc",
    }),
  })
  .openapi("Database");

/** The path form of a database's URL on `origin`; the trailing slash keeps clients' relative paths inside it. */
export function databasePathUrl(origin: string, d: Database): string {
  return `${origin}/db/${encodeURIComponent(d.orgSlug)}/${encodeURIComponent(d.name)}/`;
}

/** `origin`: the caller's (see api/origin.ts), for `http_url`. */
export function databaseWire(d: Database, version: string, origin: string): z.infer<typeof DatabaseWire> {
  return {
    Name: d.name,
    DbId: d.id,
    Hostname: d.hostname,
    http_url: databasePathUrl(origin, d),
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
    is_schema: d.isSchema,
    schema: d.schema ?? "",
    archived: d.archived,
    sleeping: d.archived,
    parent: d.parent && { id: d.parent.id, name: d.parent.name, branched_at: d.parent.branchedAt },
    ...(d.encryptionCipher ? { encryption_cipher: d.encryptionCipher } : {}),
  };
}

export const CreatedDatabaseWire = z
  .object({ DbId: z.string(), Hostname: z.string(), Name: z.string() })
  .openapi("CreatedDatabase");

/** The short answer of a create: Turso's clients read these three keys. */
export function createdDatabaseWire(d: Database): z.infer<typeof CreatedDatabaseWire> {
  return { DbId: d.id, Hostname: d.hostname, Name: d.name };
}

/**
 * The v3 API's Database: v1's keys plus the ids v3 addresses things by, and the settings v1 keeps
 * behind `/configuration` (`delete_protection` is already a v1 key).
 */
export const DatabaseV3Wire = DatabaseWire.extend({
  group_id: z.string().openapi({ description: "The group's id (`uuid` in group answers)." }),
  organization_id: z.string().openapi({ description: "The organization's id." }),
  allow_rules_config: z
    .object({
      allowed_ips: z.array(z.string()).openapi({
        description: "Addresses or CIDR ranges the data plane accepts; empty for any address.",
      }),
      allowed_aws_vpc_ids: z
        .array(z.string())
        .openapi({ description: "Always empty: Shoal runs no AWS VPCs." }),
    })
    .openapi({
      description: "Who may reach the data plane; changed through v1's `PATCH .../configuration`.",
    }),
}).openapi("DatabaseV3");

export function databaseV3Wire(d: Database, version: string, origin: string): z.infer<typeof DatabaseV3Wire> {
  return {
    ...databaseWire(d, version, origin),
    group_id: d.groupId,
    organization_id: d.orgId,
    allow_rules_config: { allowed_ips: d.allowedIps, allowed_aws_vpc_ids: [] },
  };
}
