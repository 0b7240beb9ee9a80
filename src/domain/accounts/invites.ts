import { hashToken, randomSecret } from "../../lib/secrets.js";
import { isoTime } from "../../lib/time.js";
import type { InviteRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import { requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { checkAccountName, checkEmail } from "../core/names.js";
import { type Role, requireUnrestricted } from "../core/roles.js";
import { insertMember } from "./account-tx.js";
import { accountErrors } from "./errors.js";
import { parseAssignableRole } from "./members.js";
import type { AccountCtx } from "./ports.js";
import { type Member, type Organization, toOrganization } from "./views.js";

/**
 * Invites to team organizations. Shoal sends no e-mail: the invited user sees pending invites
 * addressed to their username or e-mail through `GET /v1/user/invites` and accepts one there. An
 * invite also has a secret token, shown once to its creator, who may hand it to the invitee: with
 * it, an invite addressed to an e-mail can be accepted from an account with another address.
 */
export interface Invite {
  id: number;
  /** Lower-cased; null for an invite addressed to a username. */
  email: string | null;
  username: string | null;
  role: Role;
  /** Username of whoever created the invite. */
  inviter: string;
  createdAt: string;
}

/** A pending invite as the invited user sees it. */
export interface ReceivedInvite extends Invite {
  organization: { slug: string; name: string };
}

const toInvite = (i: InviteRow): Invite => ({
  id: i.id,
  email: i.email,
  username: i.username,
  role: i.role,
  inviter: i.inviter,
  createdAt: i.created_at,
});

async function requireTeamAdmin(r: Repos, ctx: AccountCtx, slug: string) {
  const { org } = await requireOrgAccess(r, ctx.actor, slug, "members:manage");
  if (org.type === "personal") throw accountErrors.invitesForTeamsOnly();
  return org;
}

/** Pending invites of a team organization, oldest first; owners and admins only. */
export async function listInvites(
  ctx: AccountCtx,
  slug: string,
): Promise<{ organization: Organization; invites: Invite[] }> {
  return ctx.deps.store.read(async (r) => {
    const org = await requireTeamAdmin(r, ctx, slug);
    return {
      organization: toOrganization(org),
      invites: (await r.invites.listPending(org.id)).map(toInvite),
    };
  });
}

/**
 * Invites someone by e-mail or by username (exactly one), replacing a pending invite to the same
 * address. Answers the invite's secret token: this is the only time it exists in clear.
 */
export async function createInvite(
  ctx: AccountCtx,
  slug: string,
  input: { email?: string; username?: string; role?: string },
): Promise<{ organization: Organization; invite: Invite; token: string }> {
  const email = input.email?.trim().toLowerCase() || undefined;
  const username = input.username?.trim() || undefined;
  if ((email === undefined) === (username === undefined)) {
    throw accountErrors.inviteAddressRequired();
  }
  if (email !== undefined) checkEmail(email);
  if (username !== undefined) checkAccountName("username", username);
  const role = parseAssignableRole(input.role);
  return ctx.deps.store.write(async (r) => {
    const org = await requireTeamAdmin(r, ctx, slug);
    // Serialises invites of one organization, so "replace the pending invite" can't leave two.
    await r.plans.lockOrganization(org.id);
    if (username !== undefined) {
      const user = await r.users.findByUsername(username);
      if (!user) throw accountErrors.noSuchUser(username);
      if (await r.members.find(org.id, user.id)) {
        throw accountErrors.alreadyMember(username, slug);
      }
    } else if (email !== undefined) {
      const member = await r.members.findByEmail(org.id, email);
      if (member) throw accountErrors.alreadyMember(member.username, slug);
    }
    const replaced = await r.invites.deletePending(org.id, email !== undefined ? { email } : { username });
    const token = randomSecret(32);
    const row = {
      org_id: org.id,
      email: email ?? null,
      username: username ?? null,
      role,
      token: hashToken(token),
      inviter: ctx.actor.username,
      created_at: isoTime(ctx.deps.clock()),
      accepted_at: null,
    };
    const id = await r.invites.insert(row);
    const to = email ?? username;
    await audit(r, ctx, org.id, "org-invite-create", `${to} invited as ${role}`, {
      ...(email !== undefined ? { email } : { username }),
      role,
      ...(replaced > 0 ? { replaced: true } : {}),
    });
    return { organization: toOrganization(org), invite: toInvite({ ...row, id }), token };
  });
}

/** Deletes the pending invite to an address (an e-mail or a username). */
export async function deleteInvite(ctx: AccountCtx, slug: string, address: string): Promise<void> {
  await ctx.deps.store.write(async (r) => {
    const org = await requireTeamAdmin(r, ctx, slug);
    const n = await r.invites.deletePending(org.id, { email: address, username: address });
    if (n === 0) throw accountErrors.inviteNotFound();
    await audit(r, ctx, org.id, "org-invite-delete", `invite to ${address} deleted`, { address });
  });
}

/** Pending invites addressed to the caller's username or e-mail. */
export async function listReceivedInvites(ctx: AccountCtx): Promise<ReceivedInvite[]> {
  return ctx.deps.store.read(async (r) => {
    const user = await r.users.findById(ctx.actor.userId);
    if (!user) throw accountErrors.userNotFound();
    return (await r.invites.pendingFor(user.username, user.email)).map((i) => ({
      ...toInvite(i),
      organization: { slug: i.org_slug, name: i.org_name },
    }));
  });
}

/**
 * The pending invite `id` if the caller may act on it: it is addressed to them, or (for an
 * e-mail invite) they hold its token. Anything else is "not found", so ids can't be probed.
 */
async function findOwnInvite(r: Repos, ctx: AccountCtx, id: number, token: string | undefined) {
  const invite = await r.invites.findPending(id);
  const user = await r.users.findById(ctx.actor.userId);
  if (!invite || !user) throw accountErrors.inviteNotFound();
  const addressed =
    invite.username === user.username || (invite.email !== null && invite.email === user.email.toLowerCase());
  const tokenMatches = token !== undefined && hashToken(token) === invite.token;
  const allowed = addressed ? token === undefined || tokenMatches : invite.email !== null && tokenMatches;
  if (!allowed) throw accountErrors.inviteNotFound();
  return { invite, user };
}

/** Accepts an invite: the caller becomes a member with the invite's role. */
export async function acceptInvite(
  ctx: AccountCtx,
  id: number,
  token?: string,
): Promise<{ organization: Organization; member: Member }> {
  requireUnrestricted(ctx.actor, "accepting an invite");
  return ctx.deps.store.write(async (r) => {
    const { invite, user } = await findOwnInvite(r, ctx, id, token);
    const org = await r.organizations.findById(invite.org_id);
    if (!org) throw accountErrors.inviteNotFound();
    await r.plans.lockOrganization(org.id);
    // Claimed first: a concurrent accept, decline or delete of the same invite makes this one fail.
    if (!(await r.invites.claim(invite.id, isoTime(ctx.deps.clock())))) throw accountErrors.inviteNotFound();
    const member = await insertMember(r, ctx, org, user, invite.role, {
      invite: invite.id,
      inviter: invite.inviter,
    });
    // Another pending invite to the same person (by the other address) has nothing left to do.
    await r.invites.deletePending(org.id, { email: user.email, username: user.username });
    return { organization: toOrganization(org), member };
  });
}

/** Declines an invite addressed to the caller; it is deleted. */
export async function declineInvite(ctx: AccountCtx, id: number): Promise<void> {
  requireUnrestricted(ctx.actor, "declining an invite");
  await ctx.deps.store.write(async (r) => {
    const { invite, user } = await findOwnInvite(r, ctx, id, undefined);
    if (!(await r.invites.deletePendingById(invite.id))) throw accountErrors.inviteNotFound();
    await audit(r, ctx, invite.org_id, "org-invite-decline", `${user.username} declined the invite`, {
      username: user.username,
      invite: invite.id,
    });
  });
}
