/**
 * The domain's objects as verbs return them. Wire shapes (Turso's key casing) are decided in the
 * API layer; these carry the facts.
 */
import type { DatabaseWithPlacement } from "../../store/databases.js";
import type { GroupRow, OrganizationRow, UserRow } from "../../store/schema.js";
import type { Role } from "../core/roles.js";

export interface Organization {
  id: string;
  slug: string;
  name: string;
  type: "personal" | "team";
  overages: boolean;
  blockedReads: boolean;
  blockedWrites: boolean;
  /** Name of the organization's plan (its quotas). */
  plan: string;
  createdAt: string;
}

export interface User {
  id: string;
  username: string;
  email: string;
  isAdmin: boolean;
  createdAt: string;
}

export interface Member {
  username: string;
  email: string;
  role: Role;
}

export interface Group {
  id: string;
  name: string;
  primary: string;
  /** Every location of the group, the primary first. */
  locations: string[];
  /** Whether each location is serving: a replica location is down while its worker is. */
  status: Record<string, "up" | "down">;
  archived: boolean;
  deleteProtection: boolean;
  createdAt: string;
}

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

export interface ApiTokenInfo {
  id: string;
  name: string;
  /** Slug of the organization the token is limited to. */
  organization: string | null;
  /** Name of the group the token is limited to. */
  group: string | null;
  scopes: string[] | null;
  createdAt: string;
  /** Who minted it, in organization-wide listings for admins. */
  owner: { username: string; email: string } | null;
}

export function toOrganization(r: OrganizationRow): Organization {
  return {
    id: r.id,
    slug: r.slug,
    name: r.name,
    type: r.type,
    overages: r.overages === 1,
    blockedReads: r.blocked_reads === 1,
    blockedWrites: r.blocked_writes === 1,
    plan: r.plan,
    createdAt: r.created_at,
  };
}

export function toUser(r: UserRow): User {
  return {
    id: r.id,
    username: r.username,
    email: r.email,
    isAdmin: r.is_admin === 1,
    createdAt: r.created_at,
  };
}

export function toGroup(
  r: GroupRow,
  locations: string[],
  status: (location: string) => "up" | "down" = () => "up",
): Group {
  return {
    id: r.id,
    name: r.name,
    primary: r.primary_location,
    locations,
    status: Object.fromEntries(locations.map((l) => [l, l === r.primary_location ? "up" : status(l)])),
    archived: r.archived === 1,
    deleteProtection: r.delete_protection === 1,
    createdAt: r.created_at,
  };
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
