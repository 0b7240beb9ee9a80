import { decodeStringCursor, type Page, type PageRequest, pageOf } from "../../lib/cursor.js";
import { requireFilesHere } from "../cluster/placement-tx.js";
import { audit } from "../core/audit-tx.js";
import { instancesOfOrganization } from "../core/instances-tx.js";
import { requireInstanceAdmin } from "../core/roles.js";
import { insertAccount, insertApiToken } from "./account-tx.js";
import type { MintedToken } from "./api-token-auth.js";
import { accountErrors } from "./errors.js";
import type { AccountCtx } from "./ports.js";
import { toUser, type User } from "./views.js";

function requireAdmin(ctx: AccountCtx): void {
  requireInstanceAdmin(ctx.actor, "manage users");
}

/** `POST /v1/admin/users`: a new user with a personal organization and a first API token. */
export async function createUser(
  ctx: AccountCtx,
  input: { username: string; email: string; admin?: boolean },
): Promise<{ user: User; token: MintedToken }> {
  requireAdmin(ctx);
  return ctx.deps.store.write(async (r) => {
    const { user, orgId } = await insertAccount(r, ctx.deps, { ...input, isAdmin: input.admin === true });
    const token = await insertApiToken(r, ctx.deps, user.id, "default");
    await audit(r, ctx, orgId, "user-signup", `user ${user.username} created`, { username: user.username });
    return { user, token };
  });
}

/** `GET /v1/admin/users`: every user by username; with `limit`, one page at a time. */
export async function listUsers(ctx: AccountCtx, page: PageRequest = {}): Promise<Page<User>> {
  requireAdmin(ctx);
  const after = decodeStringCursor(page.cursor);
  const limit = page.limit === undefined ? undefined : page.limit + 1;
  const rows = pageOf(
    await ctx.deps.store.read((r) => r.users.list({ after, limit })),
    page.limit,
    (u) => u.username,
  );
  return { items: rows.items.map(toUser), next: rows.next };
}

/**
 * `DELETE /v1/admin/users/{username}`: removes the user, their tokens, memberships and personal
 * organization with its databases. Refused while the user is the only owner of a team
 * organization (that organization would be left without anyone able to manage it).
 */
export async function deleteUser(ctx: AccountCtx, username: string): Promise<void> {
  requireAdmin(ctx);
  const removed = await ctx.deps.store.write(async (r) => {
    const user = await r.users.findByUsername(username);
    if (!user) throw accountErrors.noSuchUser(username);
    // Both checks below count, then delete: the locks (held until commit) keep a concurrent deletion
    // or demotion from making the same count, so the last administrator and owners stay.
    if (user.is_admin === 1) {
      await r.users.lockAdmins();
      if ((await r.users.countAdmins()) <= 1) {
        throw accountErrors.lastAdministrator();
      }
    }
    await r.members.lockOrganizationsOwnedBy(user.id);
    const owned = await r.members.teamOrgsSolelyOwnedBy(user.id);
    if (owned.length > 0) {
      const slugs = owned.map((o) => o.slug).join(", ");
      throw accountErrors.soleOwner(username, slugs);
    }
    const personal = await r.organizations.findBySlug(username);
    if (personal) {
      // As for deleting an organization: nothing may move out between listing and deleting.
      await r.organizations.lockAll([personal.id]);
      await r.groups.lockAllOf(personal.id);
    }
    const instances = personal ? await instancesOfOrganization(r, personal.id) : [];
    await requireFilesHere(
      r,
      ctx.deps,
      instances.map((i) => i.location),
    );
    // Their team memberships go with them: each team's audit log says so.
    for (const team of await r.organizations.listForUser(user.id)) {
      if (team.type !== "team") continue;
      await audit(r, ctx, team.id, "org-member-rm", `${username} removed: the user was deleted`, {
        username,
        role: team.role,
      });
    }
    if (personal) await r.organizations.delete(personal.id);
    // Invites to this username would otherwise wait for whoever takes the name next.
    await r.invites.deletePendingForUsername(username);
    await r.users.delete(user.id);
    // An administrator deleting themselves has no personal organization left to log in.
    const own = await r.organizations.findBySlug(ctx.actor.username);
    if (own) await audit(r, ctx, own.id, "user-delete", `user ${username} deleted`, { username });
    return instances;
  });
  await ctx.deps.instances.remove(removed);
}
