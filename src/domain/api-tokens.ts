import { ConflictError, NotFoundError, UnauthenticatedError, UniqueViolationError } from "../errors.js";
import { newTokenId } from "../lib/ids.js";
import { jwtSegments, signJwt } from "../lib/jwt.js";
import { hashToken } from "../lib/secrets.js";
import { isoTime } from "../lib/time.js";
import type { Repos } from "../store/store.js";
import { audit } from "./audit.js";
import type { Ctx, Deps, Principal } from "./context.js";
import { checkTokenName } from "./names.js";
import type { ApiTokenInfo } from "./views.js";

/** A freshly minted token: the only moment its secret value exists outside the caller's hands. */
export interface MintedToken {
  id: string;
  name: string;
  token: string;
}

/**
 * Resolves a bearer token to its principal. The lookup is by hash and never cached, so a revoked
 * token fails on its very next request, on every process sharing the store.
 */
export async function authenticate(deps: Deps, token: string): Promise<Principal> {
  const row = await deps.store.read((r) => r.apiTokens.findByHash(hashToken(token)));
  if (!row) {
    // Turso's wording for a malformed token, which the official TS client's own tests expect.
    if (jwtSegments(token) !== 3)
      throw new UnauthenticatedError("token contains an invalid number of segments");
    throw new UnauthenticatedError("invalid or revoked API token");
  }
  return {
    userId: row.user_id,
    username: row.username,
    isAdmin: row.is_admin === 1,
    tokenId: row.token_id,
    tokenName: row.token_name,
    orgId: row.org_id,
    groupId: row.group_id,
    scopes: row.scopes ? (JSON.parse(row.scopes) as string[]) : null,
  };
}

/** Generates a new token value: an EdDSA JWT whose `jti` is the token id (Turso's format). */
export async function newApiTokenValue(deps: Deps): Promise<{ id: string; token: string }> {
  const id = newTokenId();
  const token = await signJwt(deps.apiTokenKey, { jti: id, iat: Math.floor(deps.clock().getTime() / 1000) });
  return { id, token };
}

/**
 * Stores a token for a user inside the caller's transaction; only its hash is kept. `value` lets
 * the bootstrap store a token it generated (or the operator chose) before committing.
 */
export async function insertApiToken(
  r: Repos,
  deps: Deps,
  userId: string,
  name: string,
  value?: { id: string; token: string },
): Promise<MintedToken> {
  const { id, token } = value ?? (await newApiTokenValue(deps));
  const now = deps.clock();
  try {
    await r.apiTokens.insert({
      id,
      user_id: userId,
      name,
      token_hash: hashToken(token),
      org_id: null,
      group_id: null,
      scopes: null,
      created_at: isoTime(now),
    });
  } catch (e) {
    if (e instanceof UniqueViolationError) throw new ConflictError(`a token named ${name} already exists`);
    throw e;
  }
  return { id, name, token };
}

/** `POST /v1/auth/api-tokens/{name}`: a new token for the caller. */
export async function createApiToken(ctx: Ctx, name: string): Promise<MintedToken> {
  checkTokenName(name);
  return ctx.deps.store.write(async (r) => {
    const minted = await insertApiToken(r, ctx.deps, ctx.actor.userId, name);
    const personal = await r.organizations.findBySlug(ctx.actor.username);
    if (personal)
      await audit(r, ctx, personal.id, "user-token-create", `API token ${name} created`, { name });
    return minted;
  });
}

export async function listApiTokens(ctx: Ctx): Promise<ApiTokenInfo[]> {
  const rows = await ctx.deps.store.read((r) => r.apiTokens.listForUser(ctx.actor.userId));
  return rows.map((t) => ({ id: t.id, name: t.name, createdAt: t.created_at }));
}

/** Deletes the caller's token by name; the next request made with it is refused. */
export async function revokeApiToken(ctx: Ctx, name: string): Promise<void> {
  await ctx.deps.store.write(async (r) => {
    if (!(await r.apiTokens.deleteByName(ctx.actor.userId, name))) {
      throw new NotFoundError(`token ${name} not found`);
    }
    const personal = await r.organizations.findBySlug(ctx.actor.username);
    if (personal)
      await audit(r, ctx, personal.id, "user-token-delete", `API token ${name} revoked`, { name });
  });
}
