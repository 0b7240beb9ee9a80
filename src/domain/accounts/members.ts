import { decodeStringCursor, type Page, type PageRequest, pageOf } from "../../lib/cursor.js";
import type { MemberWithUser } from "../../store/members.js";
import type { Repos } from "../../store/store.js";
import { requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { checkTokenAllows, ROLES, type Role } from "../core/roles.js";
import { insertMember } from "./account-tx.js";
import { accountErrors } from "./errors.js";
import type { AccountCtx } from "./ports.js";
import type { Member } from "./views.js";

/** Roles a member can be added (or invited) with; owners are made by an owner, with a role change. */
export type AssignableRole = Exclude<Role, "owner">;
const ASSIGNABLE: readonly AssignableRole[] = ["admin", "member", "viewer"];

export function parseAssignableRole(role: string | undefined): AssignableRole {
  const r = (role ?? "member") as AssignableRole;
  if (!ASSIGNABLE.includes(r)) throw accountErrors.invalidRole();
  return r;
}

/** The caller's role now (undefined once no member), read after the organization is locked. */
async function roleOf(r: Repos, orgId: string, userId: string): Promise<Role | undefined> {
  return (await r.members.find(orgId, userId))?.role;
}

const toMember = (m: MemberWithUser): Member => ({ username: m.username, email: m.email, role: m.role });

export async function listMembers(
  ctx: AccountCtx,
  slug: string,
  page: PageRequest = {},
): Promise<Page<Member>> {
  const after = decodeStringCursor(page.cursor);
  return ctx.deps.store.read(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "read");
    const limit = page.limit === undefined ? undefined : page.limit + 1;
    const rows = pageOf(await r.members.list(org.id, { after, limit }), page.limit, (m) => m.username);
    return { items: rows.items.map(toMember), next: rows.next };
  });
}

export async function getMember(ctx: AccountCtx, slug: string, username: string): Promise<Member> {
  return ctx.deps.store.read(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "read");
    const m = await r.members.findByUsername(org.id, username);
    if (!m) throw accountErrors.memberNotFound();
    return toMember(m);
  });
}

/** Adds an existing user to a team organization; owners and admins only. */
export async function addMember(
  ctx: AccountCtx,
  slug: string,
  input: { username: string; role?: string },
): Promise<Member> {
  const role = parseAssignableRole(input.role);
  return ctx.deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "members:manage");
    if (org.type === "personal") throw accountErrors.membersForTeamsOnly();
    const user = await r.users.findByUsername(input.username);
    if (!user) throw accountErrors.noSuchUser(input.username);
    return insertMember(r, ctx, org, user, role);
  });
}

/**
 * Changes a member's role. Owners and admins change roles; only an owner makes or unmakes an
 * owner, and the last owner can't be demoted. The organization row stays locked from the owner
 * count to the update, so two concurrent demotions can't both see "another owner is left".
 */
export async function updateMemberRole(
  ctx: AccountCtx,
  slug: string,
  username: string,
  input: { role: string },
): Promise<Member> {
  const role = input.role as Role;
  if (!ROLES.includes(role)) throw accountErrors.invalidRole();
  return ctx.deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "read");
    checkTokenAllows(ctx.actor, "members:manage");
    // Everything below runs with the organization locked and reads the caller's role afresh, so a
    // concurrent change of that role is seen.
    await r.plans.lockOrganization(org.id);
    const actorRole = await roleOf(r, org.id, ctx.actor.userId);
    if (actorRole !== "owner" && actorRole !== "admin") {
      throw accountErrors.onlyAdminsChangeRoles();
    }
    const member = await r.members.findByUsername(org.id, username);
    if (!member) throw accountErrors.noSuchUser(username);
    if (member.role === role) return toMember(member);
    if ((member.role === "owner" || role === "owner") && actorRole !== "owner") {
      throw accountErrors.onlyOwnersMakeOwners();
    }
    if (member.role === "owner" && (await r.members.countOwners(org.id)) <= 1) {
      throw accountErrors.lastOwnerDemoted(slug);
    }
    await r.members.setRole(org.id, member.user_id, role);
    await audit(r, ctx, org.id, "org-member-role-update", `${username} is now ${role}`, {
      username,
      role,
      previous_role: member.role,
    });
    return { ...toMember(member), role };
  });
}

/**
 * Removes a member. Owners and admins remove others (only an owner removes an owner); any member
 * may leave. The last owner can't be removed: someone must be able to manage the organization.
 * The member's API tokens restricted to this organization go too: they would only be refused.
 */
export async function removeMember(ctx: AccountCtx, slug: string, username: string): Promise<void> {
  await ctx.deps.store.write(async (r) => {
    const leaving = username === ctx.actor.username;
    const { org } = await requireOrgAccess(r, ctx.actor, slug, leaving ? "read" : "members:manage");
    // Leaving is an organization-level act too: a group-scoped token can't do it.
    checkTokenAllows(ctx.actor, "members:manage");
    // Held until commit: the owner count below stays true while this member goes, and the
    // caller's role is read again under the lock.
    await r.plans.lockOrganization(org.id);
    const actorRole = await roleOf(r, org.id, ctx.actor.userId);
    if (!leaving && actorRole !== "owner" && actorRole !== "admin") {
      throw accountErrors.onlyAdminsManageMembers();
    }
    const member = await r.members.findByUsername(org.id, username);
    if (!member) throw accountErrors.notAMember(username, slug);
    if (member.role === "owner") {
      if (!leaving && actorRole !== "owner") throw accountErrors.onlyOwnersRemoveOwners();
      if ((await r.members.countOwners(org.id)) <= 1) {
        throw accountErrors.lastOwnerRemoved(slug);
      }
    }
    await r.members.delete(org.id, member.user_id);
    const tokens = await r.members.deleteTokensIn(org.id, member.user_id);
    await audit(
      r,
      ctx,
      org.id,
      leaving ? "org-member-leave" : "org-member-rm",
      leaving ? `${username} left` : `${username} removed`,
      { username, ...(tokens > 0 ? { revoked_tokens: tokens } : {}) },
    );
  });
}
