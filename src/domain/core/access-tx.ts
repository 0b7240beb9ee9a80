import { echoable } from "../../lib/loggable-path.js";
import type { DatabaseWithPlacement } from "../../store/databases.js";
import type { GroupRow, OrganizationRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import type { Principal } from "./context.js";
import { coreErrors } from "./errors.js";
import { type Ref, refText } from "./ref.js";
import {
  checkTokenAllows,
  type OrgAction,
  type Role,
  requireGroupInScope,
  requireRoleAllows,
} from "./roles.js";

/**
 * The organization, the caller's role and one of its groups, once the caller may do `action` on
 * that group (a group-scoped token only on its own group).
 */
export async function requireGroup(
  r: Repos,
  actor: Principal,
  slug: Ref,
  name: Ref,
  action: OrgAction,
): Promise<OrgAccess & { group: GroupRow }> {
  const access = await requireOrgAccess(r, actor, slug, action);
  const found =
    typeof name === "string"
      ? await r.groups.findByName(access.org.id, name)
      : await r.groups.findById(name.id);
  const group = found?.org_id === access.org.id ? found : undefined;
  if (!group) throw coreErrors.groupNotFound();
  requireGroupInScope(actor, group.id, group.name);
  return { ...access, group };
}

/** The organization, the caller's role and one of its databases, once the caller may do `action` on it. */
export async function requireDatabase(
  r: Repos,
  actor: Principal,
  slug: Ref,
  name: Ref,
  action: OrgAction,
): Promise<OrgAccess & { db: DatabaseWithPlacement }> {
  const access = await requireOrgAccess(r, actor, slug, action);
  const found =
    typeof name === "string"
      ? await r.databases.findByName(access.org.id, name)
      : await r.databases.findById(name.id);
  const db = found?.org_id === access.org.id ? found : undefined;
  if (!db) throw coreErrors.databaseNotFound(echoable(refText(name)));
  requireGroupInScope(actor, db.group_id, `of database ${db.name}`);
  return { ...access, db };
}

export interface OrgAccess {
  org: OrganizationRow;
  role: Role;
}

/**
 * Loads an organization by slug and checks that the caller, through this token, may do `action`
 * there. An unknown organization and one the caller doesn't belong to give the same 403, so names
 * can't be probed (and the turso CLI reads a 403 on these routes as "not a member").
 *
 * Token restrictions come on top of the role: an organization-scoped token acts in its own
 * organization only; a group-scoped token may only do what its scopes list, and never an
 * organization-level action. Which group the resource is in is checked by `requireGroupInScope`.
 */
export async function requireOrgAccess(
  r: Repos,
  actor: Principal,
  slug: Ref,
  action: OrgAction,
): Promise<OrgAccess> {
  const org =
    typeof slug === "string"
      ? await r.organizations.findBySlug(slug)
      : await r.organizations.findById(slug.id);
  const member = org ? await r.members.find(org.id, actor.userId) : undefined;
  if (!org || !member || (actor.orgId !== null && actor.orgId !== org.id)) {
    throw coreErrors.notAMember(echoable(refText(slug)));
  }
  checkTokenAllows(actor, action);
  requireRoleAllows(member.role, action);
  return { org, role: member.role };
}
