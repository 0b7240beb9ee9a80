import {
  ConflictError,
  ForbiddenError,
  InvalidError,
  NotFoundError,
  UniqueViolationError,
} from "../errors.js";
import { isoTime } from "../lib/time.js";
import { audit } from "./audit.js";
import type { Ctx } from "./context.js";
import { type Role, requireOrgAccess } from "./roles.js";
import type { Member } from "./views.js";

const ASSIGNABLE: readonly Role[] = ["admin", "member", "viewer"];

export async function listMembers(ctx: Ctx, slug: string): Promise<Member[]> {
  return ctx.deps.store.read(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "read");
    return (await r.members.list(org.id)).map((m) => ({
      username: m.username,
      email: m.email,
      role: m.role,
    }));
  });
}

/** Adds an existing user to a team organization; owners and admins only. */
export async function addMember(
  ctx: Ctx,
  slug: string,
  input: { username: string; role?: string },
): Promise<Member> {
  const role = (input.role ?? "member") as Role;
  if (!ASSIGNABLE.includes(role)) throw new InvalidError("invalid role");
  return ctx.deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "members:manage");
    if (org.type === "personal") throw new InvalidError("members can only be added to team organizations");
    const user = await r.users.findByUsername(input.username);
    if (!user) throw new NotFoundError(`could not find user ${input.username}`);
    try {
      await r.members.insert({
        org_id: org.id,
        user_id: user.id,
        role,
        created_at: isoTime(ctx.deps.clock()),
      });
    } catch (e) {
      if (e instanceof UniqueViolationError) {
        throw new ConflictError(`user ${input.username} is already a member of organization ${slug}`);
      }
      throw e;
    }
    await audit(r, ctx, org.id, "org-member-add", `${user.username} added as ${role}`, {
      username: user.username,
      role,
    });
    return { username: user.username, email: user.email, role };
  });
}

/**
 * Removes a member. Owners and admins remove others (only an owner removes an owner); any member
 * may leave. The last owner can't be removed: someone must be able to manage the organization.
 */
export async function removeMember(ctx: Ctx, slug: string, username: string): Promise<void> {
  await ctx.deps.store.write(async (r) => {
    const leaving = username === ctx.actor.username;
    const { org, role: actorRole } = await requireOrgAccess(
      r,
      ctx.actor,
      slug,
      leaving ? "read" : "members:manage",
    );
    const user = await r.users.findByUsername(username);
    const member = user ? await r.members.find(org.id, user.id) : undefined;
    if (!user || !member) throw new NotFoundError(`user ${username} is not a member of org ${slug}`);
    if (member.role === "owner") {
      if (!leaving && actorRole !== "owner") throw new ForbiddenError("only an owner can remove an owner");
      if ((await r.members.countOwners(org.id)) <= 1) {
        throw new InvalidError(`cannot remove the only owner of organization ${slug}`);
      }
    }
    await r.members.delete(org.id, user.id);
    await audit(
      r,
      ctx,
      org.id,
      leaving ? "org-member-leave" : "org-member-rm",
      leaving ? `${username} left` : `${username} removed`,
      { username },
    );
  });
}
