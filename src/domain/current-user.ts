import { NotFoundError } from "../errors.js";
import type { Ctx } from "./context.js";

export interface CurrentUser {
  username: string;
  email: string;
  /** Plan of the user's personal organization. */
  plan: string;
  isAdmin: boolean;
  pendingInvites: number;
}

/** `GET /v1/user` and `/v1/current-user`: who the token acts as. */
export async function getCurrentUser(ctx: Ctx): Promise<CurrentUser> {
  return ctx.deps.store.read(async (r) => {
    const user = await r.users.findById(ctx.actor.userId);
    if (!user) throw new NotFoundError("user not found");
    const personal = await r.organizations.findBySlug(user.username);
    return {
      username: user.username,
      email: user.email,
      plan: personal?.plan ?? "self-hosted",
      isAdmin: user.is_admin === 1,
      pendingInvites: await r.invites.countPendingFor(user.username, user.email),
    };
  });
}

/**
 * `POST /v1/auth/invalidate` (the CLI's `auth logout --all`): revokes every API token of the
 * caller, including the one making this call. Answers the time from which tokens are valid.
 */
export async function invalidateSessions(ctx: Ctx): Promise<number> {
  await ctx.deps.store.write((r) => r.apiTokens.deleteForUser(ctx.actor.userId));
  return Math.floor(ctx.deps.clock().getTime() / 1000);
}
