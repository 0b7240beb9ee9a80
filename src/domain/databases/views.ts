import type { DatabaseWithPlacement } from "../../store/databases.js";

export interface Database {
  id: string;
  name: string;
  orgSlug: string;
  orgId: string;
  hostname: string;
  group: string;
  groupId: string;
  primaryLocation: string;
  locations: string[];
  sizeLimit: string | null;
  blockReads: boolean;
  blockWrites: boolean;
  allowAttach: boolean;
  deleteProtection: boolean;
  /** Addresses (IPs or CIDR ranges) the data plane accepts; empty for any. */
  allowedIps: string[];
  /** Archived with its group (see `Group.archived`). */
  archived: boolean;
  isSchema: boolean;
  /** Name of the schema database this one follows. */
  schema: string | null;
  /** The database a branch was made from; `name` is null once that database is gone from the organization. */
  parent: { id: string; name: string | null; branchedAt: string | null } | null;
  createdAt: string;
  /** The cipher of a database encrypted at rest with its owner's key; null for a plain one. */
  encryptionCipher: string | null;
}

export function toDatabase(r: DatabaseWithPlacement, locations: string[], dbDomain: string): Database {
  return {
    id: r.id,
    name: r.name,
    orgSlug: r.org_slug,
    orgId: r.org_id,
    hostname: `${r.name}-${r.org_slug}.${dbDomain}`,
    group: r.group_name,
    groupId: r.group_id,
    primaryLocation: r.primary_location,
    locations,
    sizeLimit: r.size_limit,
    blockReads: r.block_reads === 1,
    blockWrites: r.block_writes === 1,
    allowAttach: r.allow_attach === 1,
    deleteProtection: r.delete_protection === 1,
    allowedIps: allowedIpsOf(r.allowed_ips),
    archived: r.group_archived === 1,
    isSchema: r.is_schema === 1,
    schema: r.schema_name ?? null,
    parent:
      r.parent_id === null
        ? null
        : { id: r.parent_id, name: r.parent_name ?? null, branchedAt: r.branched_at },
    createdAt: r.created_at,
    encryptionCipher: r.encryption_cipher ?? null,
  };
}

/** The stored allowlist (JSON, or null for everyone) as a list; empty for everyone. */
export function allowedIpsOf(stored: string | null): string[] {
  return stored ? (JSON.parse(stored) as string[]) : [];
}
