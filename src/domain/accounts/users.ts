import { ConflictError, InvalidError, NotFoundError, UniqueViolationError } from "../../errors.js";
import { instancesOfOrganization, removeInstances } from "../../hosting/instance-lifecycle.js";
import { decodeStringCursor, type Page, type PageRequest, pageOf } from "../../lib/cursor.js";
import { newUuid } from "../../lib/ids.js";
import { isoTime } from "../../lib/time.js";
import type { Repos } from "../../store/store.js";
import { requireFilesHere } from "../cluster/placement-tx.js";
import { audit } from "../core/audit-tx.js";
import type { Ctx, Deps } from "../core/context.js";
import { checkAccountName, checkEmail } from "../core/names.js";
import { requireInstanceAdmin } from "../core/roles.js";
import { insertApiToken, type MintedToken } from "./api-tokens.js";
import { toUser, type User } from "./views.js";

interface NewAccount {
  username: string;
  email: string;
  isAdmin: boolean;
}

/**
 * Creates a user and the personal organization every user has (slug = username, name
 * `personal`, type `personal`), with the user as its owner. Runs inside the caller's transaction.
 */
async function insertAccount(r: Repos, deps: Deps, a: NewAccount): Promise<{ user: User; orgId: string }> {
  checkAccountName("username", a.username);
  checkEmail(a.email);
  const now = isoTime(deps.clock());
  const user = {
    id: newUuid(),
    username: a.username,
    email: a.email,
    is_admin: a.isAdmin ? 1 : 0,
    created_at: now,
  };
  const orgId = newUuid();
  try {
    await r.users.insert(user);
    await r.organizations.insert({
      id: orgId,
      slug: a.username,
      name: "personal",
      type: "personal",
      overages: 0,
      blocked_reads: 0,
      blocked_writes: 0,
      created_at: now,
    });
  } catch (e) {
    // Usernames and organization slugs share one namespace (a personal org's slug is the username).
    if (e instanceof UniqueViolationError) throw new ConflictError(`username ${a.username} is not available`);
    throw e;
  }
  await r.members.insert({ org_id: orgId, user_id: user.id, role: "owner", created_at: now });
  return { user: toUser(user), orgId };
}

function requireAdmin(ctx: Ctx): void {
  requireInstanceAdmin(ctx.actor, "manage users");
}

/** `POST /v1/admin/users`: a new user with a personal organization and a first API token. */
export async function createUser(
  ctx: Ctx,
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
export async function listUsers(ctx: Ctx, page: PageRequest = {}): Promise<Page<User>> {
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
export async function deleteUser(ctx: Ctx, username: string): Promise<void> {
  requireAdmin(ctx);
  const removed = await ctx.deps.store.write(async (r) => {
    const user = await r.users.findByUsername(username);
    if (!user) throw new NotFoundError(`could not find user ${username}`);
    // Both checks below count, then delete: the locks (held until commit) keep a concurrent deletion
    // or demotion from making the same count, so the last administrator and owners stay.
    if (user.is_admin === 1) {
      await r.users.lockAdmins();
      if ((await r.users.countAdmins()) <= 1) {
        throw new InvalidError("cannot delete the last instance administrator");
      }
    }
    await r.members.lockOrganizationsOwnedBy(user.id);
    const owned = await r.members.teamOrgsSolelyOwnedBy(user.id);
    if (owned.length > 0) {
      const slugs = owned.map((o) => o.slug).join(", ");
      throw new ConflictError(
        `user ${username} is the only owner of ${slugs}; add another owner or delete those organizations first`,
      );
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
  await removeInstances(ctx.deps, removed);
}

/**
 * First start: when the store has no administrator, creates one with a personal organization and
 * the given API token. Returns false when an administrator already exists (later starts, or another
 * process that bootstrapped first); then nothing changes.
 */
export async function bootstrapAdmin(
  deps: Deps,
  input: { username: string; email: string; token: { id: string; token: string } },
): Promise<boolean> {
  return deps.store.write(async (r) => {
    // Nodes starting at once with different SHOAL_ADMIN_USER values would each see no
    // administrator and make one: the first start takes a lock the others wait for.
    await r.users.lockBootstrap();
    if ((await r.users.countAdmins()) > 0) return false;
    const { user } = await insertAccount(r, deps, {
      username: input.username,
      email: input.email,
      isAdmin: true,
    });
    await insertApiToken(r, deps, user.id, "bootstrap", input.token);
    return true;
  });
}

/** Whether the instance already has an administrator (i.e. this is not a first start). */
export async function hasAdmin(deps: Deps): Promise<boolean> {
  return (await deps.store.read((r) => r.users.countAdmins())) > 0;
}
