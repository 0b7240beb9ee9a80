import { NotFoundError } from "../../errors.js";
import { echoable } from "../../lib/loggable-path.js";
import type { DatabaseWithPlacement } from "../../store/databases.js";
import type { GroupRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import type { Principal } from "./context.js";
import { type OrgAccess, type OrgAction, requireGroupInScope, requireOrgAccess } from "./roles.js";

export const groupNotFound = () => new NotFoundError("group not found");
export const databaseNotFound = (name: string) =>
  new NotFoundError(`could not find database with name ${echoable(name)}: record not found`);

/**
 * The organization, the caller's role and one of its groups, once the caller may do `action` on
 * that group (a group-scoped token only on its own group).
 */
export async function requireGroup(
  r: Repos,
  actor: Principal,
  slug: string,
  name: string,
  action: OrgAction,
): Promise<OrgAccess & { group: GroupRow }> {
  const access = await requireOrgAccess(r, actor, slug, action);
  const group = await r.groups.findByName(access.org.id, name);
  if (!group) throw groupNotFound();
  requireGroupInScope(actor, group.id, group.name);
  return { ...access, group };
}

/** The organization, the caller's role and one of its databases, once the caller may do `action` on it. */
export async function requireDatabase(
  r: Repos,
  actor: Principal,
  slug: string,
  name: string,
  action: OrgAction,
): Promise<OrgAccess & { db: DatabaseWithPlacement }> {
  const access = await requireOrgAccess(r, actor, slug, action);
  const db = await r.databases.findByName(access.org.id, name);
  if (!db) throw databaseNotFound(name);
  requireGroupInScope(actor, db.group_id, `of database ${name}`);
  return { ...access, db };
}
