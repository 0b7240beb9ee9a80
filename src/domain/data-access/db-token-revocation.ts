import { verifyJwtSignature } from "../../lib/jwt.js";
import { isoTime } from "../../lib/time.js";
import type { Repos } from "../../store/store.js";
import { requireDatabase, requireGroup } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { dataAccessErrors } from "./errors.js";
import type { DbTokenCtx } from "./ports.js";

/**
 * The token to revoke, as its bearer holds it. Only the token itself is taken, never a bare id: its
 * signature proves the id and the database or group it belongs to, so nobody can record a
 * revocation against another token's id.
 */
export interface RevokeRequest {
  token?: string;
}

interface Revoked {
  jti: string;
  /** When the token expires anyway (Unix seconds); null for a token that never does. */
  expiresAt: number | null;
}

/** Checks the token against this Shoal's key and that it belongs where the path says. */
async function identify(
  ctx: DbTokenCtx,
  req: RevokeRequest,
  owns: (c: Record<string, unknown>) => boolean,
  what: string,
): Promise<Revoked> {
  if (!req.token) throw dataAccessErrors.revokeWhat();
  let claims: Record<string, unknown>;
  try {
    claims = await verifyJwtSignature(ctx.deps.dbTokenKey, req.token);
  } catch {
    throw dataAccessErrors.foreignToken();
  }
  if (typeof claims.jti !== "string" || !owns(claims)) throw dataAccessErrors.tokenOfOther(what);
  return { jti: claims.jti, expiresAt: typeof claims.exp === "number" ? claims.exp : null };
}

/** `POST .../databases/{db}/auth/tokens/revoke`: one token of the database stops working. */
export async function revokeDatabaseToken(ctx: DbTokenCtx, slug: string, dbName: string, req: RevokeRequest) {
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
export async function revokeGroupToken(ctx: DbTokenCtx, slug: string, groupName: string, req: RevokeRequest) {
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
  ctx: DbTokenCtx,
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
