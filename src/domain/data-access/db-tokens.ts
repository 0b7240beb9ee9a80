import { newTokenId } from "../../lib/ids.js";
import { signJwt } from "../../lib/jwt.js";
import { echoable } from "../../lib/loggable-path.js";
import { requireDatabase, requireGroup } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { coreErrors } from "../core/errors.js";
import type { Ref } from "../core/ref.js";
import { requireGroupInScope } from "../core/roles.js";
import { dataAccessErrors } from "./errors.js";
import type { DbTokenCtx, DbTokenPorts } from "./ports.js";
import type { TablePermission } from "./table-permissions.js";

export interface TokenRequest {
  /** Turso's grammar: `never` (default) or a Go-style duration such as `2w1d`, `12h`, `30m`. */
  expiration?: string;
  /** `full-access` (default) or `read-only`. */
  authorization?: string;
  /** Names of databases of the same organization the token may read through ATTACH. */
  attach?: readonly string[];
  /** Fine-grained permissions (checked by `parseTablePermissions`); none: no table-level limits. */
  tables?: readonly TablePermission[];
}

const UNIT_SECONDS: Record<string, number> = {
  w: 7 * 86_400,
  d: 86_400,
  h: 3_600,
  m: 60,
  s: 1,
  ms: 1e-3,
  us: 1e-6,
  µs: 1e-6,
  ns: 1e-9,
};

/** Seconds until expiry, or null for a token that never expires. */
export function parseExpiration(text: string | undefined): number | null {
  const t = (text ?? "").trim();
  if (t === "" || t === "never" || t === "none" || t === "default") return null;
  const re = /(\d+)(ms|us|µs|ns|w|d|h|m|s)/y;
  let total = 0;
  let at = 0;
  while (at < t.length) {
    re.lastIndex = at;
    const m = re.exec(t);
    if (!m) throw dataAccessErrors.invalidExpiration(t);
    total += Number(m[1]) * (UNIT_SECONDS[m[2]!] ?? 0);
    at = re.lastIndex;
  }
  if (total < 1) throw dataAccessErrors.expiresAtOnce();
  return Math.floor(total);
}

function accessOf(authorization: string | undefined): "rw" | "ro" {
  if (authorization === undefined || authorization === "" || authorization === "full-access") return "rw";
  if (authorization === "read-only") return "ro";
  throw dataAccessErrors.invalidAuthorization();
}

/**
 * The claims sqld reads (`a`, `id`, `p`, `exp`) plus Shoal's own: `gid` for group tokens and the
 * credential generations (`gen`, `ggen`) that rotation bumps. When the token may ATTACH other
 * databases, `p` carries both its main access and the attach list, as sqld ignores `a`/`id` once
 * `p` is present.
 */
function claimsFor(
  scope: { id: string } | { gid: string },
  access: "rw" | "ro",
  generations: { gen?: number; ggen: number },
  attachIds: string[],
  nowSec: number,
  ttlSec: number | null,
  tables: readonly TablePermission[] = [],
): Record<string, unknown> {
  const claims: Record<string, unknown> = {
    a: access,
    ...scope,
    ...generations,
    jti: newTokenId(),
    iat: nowSec,
    // Turso's claim for table-level limits, as its template and identity providers' tokens carry it.
    ...(tables.length > 0 ? { perm: tables } : {}),
  };
  if (ttlSec !== null) claims.exp = nowSec + ttlSec;
  if (attachIds.length > 0) {
    const own = "id" in scope ? { ns: [scope.id] } : { tags: [scope.gid] };
    claims.p = { [access]: own, roa: { ns: attachIds } };
  }
  return claims;
}

async function attachIdsOf(
  ctx: DbTokenCtx,
  orgId: string,
  names: readonly string[] | undefined,
): Promise<string[]> {
  const ids: string[] = [];
  for (const name of new Set(names ?? [])) {
    const d = await ctx.deps.store.read((r) => r.databases.findByName(orgId, name));
    if (!d) throw dataAccessErrors.attachUnknown(name);
    requireGroupInScope(ctx.actor, d.group_id, `of database ${name}`);
    ids.push(d.id);
  }
  return ids;
}

/** `POST .../databases/{db}/auth/tokens`: a token for one database. */
export async function mintDatabaseToken(
  ctx: DbTokenCtx,
  slug: Ref,
  dbRef: Ref,
  req: TokenRequest,
): Promise<string> {
  const ttl = parseExpiration(req.expiration);
  const access = accessOf(req.authorization);
  const { org, db, name } = await ctx.deps.store.read(async (r) => {
    const { org, db: row } = await requireDatabase(r, ctx.actor, slug, dbRef, "db:mint-token");
    const db = await r.databases.findForDataPlane({ orgSlug: org.slug, name: row.name });
    return { org, db, name: row.name };
  });
  if (!db) throw coreErrors.databaseNotFound(echoable(name));
  const attachIds = await attachIdsOf(ctx, org.id, req.attach);
  const nowSec = Math.floor(ctx.deps.clock().getTime() / 1000);
  const claims = claimsFor(
    { id: db.id },
    access,
    { gen: db.token_generation, ggen: db.group_token_generation },
    attachIds,
    nowSec,
    ttl,
    req.tables,
  );
  return signJwt(ctx.deps.dbTokenKey, claims);
}

/** `POST .../groups/{group}/auth/tokens`: a token for every database of a group, present and future. */
export async function mintGroupToken(
  ctx: DbTokenCtx,
  slug: Ref,
  groupName: Ref,
  req: TokenRequest,
): Promise<string> {
  const ttl = parseExpiration(req.expiration);
  const access = accessOf(req.authorization);
  const { org, group } = await ctx.deps.store.read((r) =>
    requireGroup(r, ctx.actor, slug, groupName, "group:mint-token"),
  );
  const attachIds = await attachIdsOf(ctx, org.id, req.attach);
  const nowSec = Math.floor(ctx.deps.clock().getTime() / 1000);
  const claims = claimsFor(
    { gid: group.id },
    access,
    { ggen: group.token_generation },
    attachIds,
    nowSec,
    ttl,
    req.tables,
  );
  return signJwt(ctx.deps.dbTokenKey, claims);
}

/**
 * The credential a location's replica syncs with: read-only, for one database, marked with the
 * location. Internal (never handed to users), so rotating users' tokens doesn't cut replication.
 */
export async function mintReplicationToken(
  deps: Pick<DbTokenPorts, "dbTokenKey" | "clock">,
  dbId: string,
  location: string,
): Promise<string> {
  const nowSec = Math.floor(deps.clock().getTime() / 1000);
  return signJwt(deps.dbTokenKey, { a: "ro", id: dbId, rep: location, jti: newTokenId(), iat: nowSec });
}

/** Invalidates every token minted so far for one database; tokens of other databases stay valid. */
export async function rotateDatabaseTokens(ctx: DbTokenCtx, slug: string, dbName: string): Promise<void> {
  await ctx.deps.store.write(async (r) => {
    const { org, db } = await requireDatabase(r, ctx.actor, slug, dbName, "db:rotate-creds");
    await r.databases.bumpTokenGeneration(db.id);
    await audit(r, ctx, org.id, "db-rotate-creds", `credentials of database ${dbName} rotated`, {
      database: dbName,
    });
  });
  ctx.deps.directory.invalidate();
}

/** Invalidates every group token of a group and every database token of its databases. */
export async function rotateGroupTokens(ctx: DbTokenCtx, slug: string, groupName: string): Promise<void> {
  await ctx.deps.store.write(async (r) => {
    const { org, group } = await requireGroup(r, ctx.actor, slug, groupName, "group:rotate-creds");
    await r.groups.bumpTokenGeneration(group.id);
    await audit(r, ctx, org.id, "group-rotate-creds", `credentials of group ${groupName} rotated`, {
      group: groupName,
    });
  });
  ctx.deps.directory.invalidate();
}
