import type { DatabaseWithPlacement } from "../../store/databases.js";

export interface Database {
  id: string;
  name: string;
  orgSlug: string;
  hostname: string;
  group: string;
  primaryLocation: string;
  locations: string[];
  sizeLimit: string | null;
  blockReads: boolean;
  blockWrites: boolean;
  allowAttach: boolean;
  deleteProtection: boolean;
  /** Archived with its group (see `Group.archived`). */
  archived: boolean;
  isSchema: boolean;
  /** Name of the schema database this one follows. */
  schema: string | null;
  /** The database a branch was made from; `name` is null once that database is gone from the organization. */
  parent: { id: string; name: string | null; branchedAt: string | null } | null;
  createdAt: string;
}

export function toDatabase(r: DatabaseWithPlacement, locations: string[], dbDomain: string): Database {
  return {
    id: r.id,
    name: r.name,
    orgSlug: r.org_slug,
    hostname: `${r.name}-${r.org_slug}.${dbDomain}`,
    group: r.group_name,
    primaryLocation: r.primary_location,
    locations,
    sizeLimit: r.size_limit,
    blockReads: r.block_reads === 1,
    blockWrites: r.block_writes === 1,
    allowAttach: r.allow_attach === 1,
    deleteProtection: r.delete_protection === 1,
    archived: r.group_archived === 1,
    isSchema: r.is_schema === 1,
    schema: r.schema_name ?? null,
    parent:
      r.parent_id === null
        ? null
        : { id: r.parent_id, name: r.parent_name ?? null, branchedAt: r.branched_at },
    createdAt: r.created_at,
  };
}
