import { InvalidError } from "../errors.js";
import { verifyJwtSignature } from "../lib/jwt.js";
import { isoTime } from "../lib/time.js";
import type { Repos } from "../store/store.js";
import { requireDatabase, requireGroup } from "./access.js";
import { audit } from "./audit.js";
import type { Ctx } from "./context.js";

/** Which token to revoke: the token itself, or its id (the `jti` claim). */
export interface RevokeRequest {
  token?: string;
  id?: string;
}

interface Revoked {
  jti: string;
  /** When the token expires anyway (Unix seconds); null when unknown or never. */
  expiresAt: number | null;
}

const TOKEN_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Works out the id of the token to revoke. A token is checked against this Shoal's key and must
 * belong to the database or group named in the path; a bare id can only name a token of that
 * database or group, since the revocation is recorded against it.
 */
async function identify(
  ctx: Ctx,
  req: RevokeRequest,
  owns: (c: Record<string, unknown>) => boolean,
  what: string,
) {
  if ((req.token === undefined) === (req.id === undefined)) {
    throw new InvalidError('send exactly one of "token" (the token itself) or "id" (its jti claim)');
  }
  if (req.id !== undefined) {
    if (!TOKEN_ID.test(req.id))
      throw new InvalidError("id must be the token's jti: letters, digits, - and _");
    return { jti: req.id, expiresAt: null } satisfies Revoked;
  }
  let claims: Record<string, unknown>;
  try {
    claims = await verifyJwtSignature(ctx.deps.dbTokenKey, req.token ?? "");
  } catch {
    throw new InvalidError("token is not a database or group token issued by this Shoal");
  }
  if (typeof claims.jti !== "string" || !owns(claims))
    throw new InvalidError(`token is not a token of ${what}`);
  return { jti: claims.jti, expiresAt: typeof claims.exp === "number" ? claims.exp : null } satisfies Revoked;
}

/** `POST .../databases/{db}/auth/tokens/revoke`: one token of the database stops working. */
export async function revokeDatabaseToken(ctx: Ctx, slug: string, dbName: string, req: RevokeRequest) {
  const jti = await ctx.deps.store.write(async (r) => {
    const { org, db } = await requireDatabase(r, ctx.actor, slug, dbName, "db:rotate-creds");
    const t = await identify(ctx, req, (c) => c.id === db.id && c.rep === undefined, `database ${dbName}`);
    await record(ctx, r, { ...t, dbId: db.id, groupId: null });
    await audit(r, ctx, org.id, "db-token-revoke", `a token of database ${dbName} revoked`, {
      database: dbName,
      token_id: t.jti,
    });
    return t.jti;
  });
  ctx.deps.directory.invalidate();
  return jti;
}

/** `POST .../groups/{group}/auth/tokens/revoke`: one group token stops working on every database. */
export async function revokeGroupToken(ctx: Ctx, slug: string, groupName: string, req: RevokeRequest) {
  const jti = await ctx.deps.store.write(async (r) => {
    const { org, group } = await requireGroup(r, ctx.actor, slug, groupName, "group:rotate-creds");
    const t = await identify(ctx, req, (c) => c.gid === group.id, `group ${groupName}`);
    await record(ctx, r, { ...t, dbId: null, groupId: group.id });
    await audit(r, ctx, org.id, "group-token-revoke", `a token of group ${groupName} revoked`, {
      group: groupName,
      token_id: t.jti,
    });
    return t.jti;
  });
  ctx.deps.directory.invalidate();
  return jti;
}

async function record(
  ctx: Ctx,
  r: Repos,
  t: Revoked & { dbId: string | null; groupId: string | null },
): Promise<void> {
  const now = ctx.deps.clock();
  await r.revokedDbTokens.pruneExpired(Math.floor(now.getTime() / 1000));
  await r.revokedDbTokens.revoke({
    jti: t.jti,
    db_id: t.dbId,
    group_id: t.groupId,
    expires_at: t.expiresAt,
    revoked_at: isoTime(now),
  });
}
