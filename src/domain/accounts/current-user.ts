import { audit } from "../core/audit-tx.js";
import { DEFAULT_PLAN } from "../plans/plans.js";
import { accountErrors } from "./errors.js";
import type { AccountCtx } from "./ports.js";

export interface CurrentUser {
  username: string;
  email: string;
  /** Plan of the user's personal organization. */
  plan: string;
  isAdmin: boolean;
  pendingInvites: number;
}

/** `GET /v1/user` and `/v1/current-user`: who the token acts as. */
export async function getCurrentUser(ctx: AccountCtx): Promise<CurrentUser> {
  return ctx.deps.store.read(async (r) => {
    const user = await r.users.findById(ctx.actor.userId);
    if (!user) throw accountErrors.userNotFound();
    const personal = await r.organizations.findBySlug(user.username);
    return {
      username: user.username,
      email: user.email,
      plan: personal?.plan ?? DEFAULT_PLAN,
      isAdmin: user.is_admin === 1,
      pendingInvites: await r.invites.countPendingFor(user.username, user.email),
    };
  });
}

/**
 * `POST /v1/auth/invalidate` (the CLI's `auth logout --all`). On Turso it ends every browser login
 * session and leaves API tokens alone. Shoal has no login sessions: the API token a client signs in
 * with is its session. So this revokes the token making the call, on every machine it was copied
 * to, and leaves the caller's other tokens (scripts, CI) valid, as Turso does with API tokens.
 * Answers the time from which the revocation holds (Unix seconds).
 *
 * Refused when it would leave no administrator token at all: nobody could administer the
 * instance (or mint anyone a way back in) afterwards.
 */
export async function invalidateSessions(ctx: AccountCtx): Promise<number> {
  const { actor } = ctx;
  await ctx.deps.store.write(async (r) => {
    if (actor.isAdmin && actor.orgId === null && actor.groupId === null) {
      await r.users.lockAdmins();
      if ((await r.users.countAdminTokens()) <= 1) {
        throw accountErrors.lastAdminSession();
      }
    }
    await r.apiTokens.deleteById(actor.tokenId);
    const personal = await r.organizations.findBySlug(actor.username);
    if (personal) {
      await audit(r, ctx, personal.id, "user-token-delete", `API token ${actor.tokenName} invalidated`, {
        name: actor.tokenName,
        id: actor.tokenId,
        via: "auth/invalidate",
      });
    }
  });
  return Math.floor(ctx.deps.clock().getTime() / 1000);
}
