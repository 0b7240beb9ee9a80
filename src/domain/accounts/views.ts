import type { OrganizationRow, UserRow } from "../../store/schema.js";
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
  /** Whether deleted databases and groups are kept restorable (Turso's "Allow restore"). */
  restoreEnabled: boolean;
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
    // Absent on a row built by hand before the insert: the column's default.
    restoreEnabled: (r.restore_enabled ?? 1) === 1,
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
