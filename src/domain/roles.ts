import { ForbiddenError } from "../errors.js";
import type { OrganizationRow } from "../store/schema.js";
import type { Repos } from "../store/store.js";
import type { Principal } from "./context.js";

export type Role = "owner" | "admin" | "member" | "viewer";
export const ROLES: readonly Role[] = ["owner", "admin", "member", "viewer"];

/** What a caller wants to do inside an organization. */
export type OrgAction = "read" | "write" | "manage-members" | "delete";

const ALLOWED: Record<OrgAction, readonly Role[]> = {
  read: ["owner", "admin", "member", "viewer"],
  write: ["owner", "admin", "member"],
  "manage-members": ["owner", "admin"],
  delete: ["owner"],
};

const DENIED: Record<OrgAction, string> = {
  read: "you are not a member of this organization",
  write: "your role in this organization does not allow changes",
  "manage-members": "only organization admins or owners can manage members",
  delete: "only the organization owner can do this",
};

export interface OrgAccess {
  org: OrganizationRow;
  role: Role;
}

/**
 * Loads an organization by slug and checks the caller may do `action` there. An unknown
 * organization and one the caller doesn't belong to give the same 403, so names can't be probed
 * (and the turso CLI reads a 403 on these routes as "not a member").
 */
export async function requireOrgAccess(
  r: Repos,
  actor: Principal,
  slug: string,
  action: OrgAction,
): Promise<OrgAccess> {
  const org = await r.organizations.findBySlug(slug);
  const member = org ? await r.members.find(org.id, actor.userId) : undefined;
  if (!org || !member || (actor.orgId !== null && actor.orgId !== org.id)) {
    throw new ForbiddenError(`you are not a member of organization ${slug}`);
  }
  if (!ALLOWED[action].includes(member.role)) throw new ForbiddenError(DENIED[action]);
  return { org, role: member.role };
}
