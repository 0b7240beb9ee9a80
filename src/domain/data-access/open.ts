import type { DatabaseKey } from "../../engine/encryption/keys.js";
import { allowlistOf } from "../../lib/ip-allowlist.js";
import { dataAccessErrors } from "./errors.js";
import type { DataAccessPorts, DatabaseLocator, DataPlaneDatabase } from "./ports.js";
import type { OrgTrust, ProviderVerdict } from "./provider-tokens.js";
import { rightsOfClaims, type TableRights } from "./table-permissions.js";
import type { TokenClaims } from "./token-verifier.js";

/** What the access is for: SQL and sync (the default), or uploading a database's file. */
export type AccessPurpose = "sql" | "upload";

/** What a verified database token lets its bearer do on one database. */
export interface DataAccess {
  database: DataPlaneDatabase;
  /** File of the database's primary instance. */
  path: string;
  canWrite: boolean;
  /** Databases this token may read through ATTACH. */
  attachIds: ReadonlySet<string>;
  /**
   * Set when the token carries fine-grained permissions: the tables it may use and how. Every
   * statement is checked against them (dataplane/hrana/authorize.ts), and routes that hand out the
   * whole file refuse such a token.
   */
  rights?: TableRights;
  /** Set for the internal token of a location's replica: that location. Such tokens only sync. */
  replicaOf?: string;
  /** For an encrypted database: the verified key the request brought (encryption.ts). */
  key?: DatabaseKey;
  /**
   * Set when the primary is on another node and the request is for a location this node holds:
   * reads run on the replica here, the rest is forwarded with the bearer's own token.
   */
  primaryElsewhere?: { token: string };
}

/**
 * Decides whether a bearer token opens a database. Each refusal has its own code so a client can
 * tell them apart: an unknown database, a token of another database or group, a token whose
 * database or group was deleted, and a token whose credentials were rotated.
 */
export async function openDataAccess(
  deps: DataAccessPorts,
  locator: DatabaseLocator,
  token: string | undefined,
  purpose: AccessPurpose = "sql",
  peer?: string,
  /** The location the request asked for, if any. */
  at?: string,
): Promise<DataAccess> {
  let database = await deps.directory.find(locator);
  // A location the cached record lacks may have been added a moment ago by another node (the
  // cache is up to DIRECTORY_TTL_MS old): read the store again before refusing it.
  if (database && at !== undefined && !database.locations.includes(at))
    database = await deps.directory.reload(locator);
  if (!database) throw dataAccessErrors.noDatabase();
  if (!token) {
    throw dataAccessErrors.missingToken();
  }
  const claims = await deps.tokenVerifier.verify(token, trustOf(database));
  const refusal = checkScope(database, claims);
  // A provider's token may name any id: whether that id exists elsewhere is none of its business.
  if (refusal === "foreign" && claims.via !== undefined) throw dataAccessErrors.otherDatabase();
  if (refusal === "foreign") {
    await refuseForeign(deps, claims.id !== undefined ? { id: claims.id } : { groupId: claims.gid ?? "" });
  }
  return grant(deps, database, claims, purpose, peer, at, token);
}

/**
 * The same decision without waiting, when the database record and the token are both cached
 * (the common case for a busy database); undefined means "take the slow path".
 */
export function openDataAccessCached(
  deps: DataAccessPorts,
  /** The database, by its record when the caller has just found it (else looked up in the cache). */
  named: { locator: DatabaseLocator; record?: DataPlaneDatabase | undefined },
  token: string | undefined,
  peer?: string,
  at?: string,
): DataAccess | undefined {
  const database = named.record ?? deps.directory.peek(named.locator);
  const claims = token && database ? deps.tokenVerifier.cached(token, trustOf(database)) : undefined;
  if (!database || !token || !claims || checkScope(database, claims) === "foreign") return undefined;
  if (at !== undefined && !database.locations.includes(at)) return undefined;
  return grant(deps, database, claims, "sql", peer, at, token);
}

/** The key sets a token for this database may be signed with: its organization's. */
function trustOf(database: DataPlaneDatabase): OrgTrust {
  return { orgId: database.org_id, sets: database.jwks };
}

/** Throws for a revoked or unscoped token; "foreign" when the token belongs elsewhere. */
function checkScope(database: DataPlaneDatabase, claims: TokenClaims): "own" | "foreign" {
  if (claims.via !== undefined) return providerScope(database, claims, claims.via);
  if (claims.id !== undefined) {
    if (claims.id !== database.id) return "foreign";
    // Replication tokens are internal and unaffected by rotating the users' tokens.
    if (claims.rep !== undefined) return "own";
    if (claims.gen !== database.token_generation || claims.ggen !== database.group_token_generation) {
      throw dataAccessErrors.rotated();
    }
    requireNotRevoked(database, claims);
    return "own";
  }
  if (claims.gid !== undefined) {
    if (claims.gid !== database.group_id) return "foreign";
    if (claims.ggen !== database.group_token_generation) {
      throw dataAccessErrors.rotated();
    }
    requireNotRevoked(database, claims);
    return "own";
  }
  throw dataAccessErrors.unscoped();
}

/**
 * A token the organization's identity provider signed (Turso's JWKS sign-in), shaped by Turso's
 * claim template: `id` a database, `gid` a group, `a` rw or ro. It is the provider's to revoke (by
 * expiry or by rotating its keys), so Shoal's generations and revocations don't apply. A token that
 * names neither a database nor a group would open every database of the organization: it is
 * accepted only from a key set saved with an audience, so a token that provider signed for some
 * other application can't. Its fine-grained permissions (`perm`) limit it as a Shoal token's do.
 */
function providerScope(
  database: DataPlaneDatabase,
  claims: TokenClaims,
  via: ProviderVerdict,
): "own" | "foreign" {
  if (claims.a !== undefined && claims.a !== "rw" && claims.a !== "ro")
    throw dataAccessErrors.providerAccess(String(claims.a));
  if (claims.id !== undefined) return claims.id === database.id ? "own" : "foreign";
  if (claims.gid !== undefined) return claims.gid === database.group_id ? "own" : "foreign";
  // The set that verified this very token checked its audience.
  if (!via.audience) throw dataAccessErrors.providerUnscoped();
  return "own";
}

function requireNotRevoked(database: DataPlaneDatabase, claims: TokenClaims): void {
  if (claims.jti !== undefined && database.revokedTokens.has(claims.jti)) {
    throw dataAccessErrors.revoked();
  }
}

function grant(
  deps: DataAccessPorts,
  database: DataPlaneDatabase,
  claims: TokenClaims,
  purpose: AccessPurpose,
  peer: string | undefined,
  at: string | undefined,
  token: string,
): DataAccess {
  // Replication tokens are this deployment's own traffic, whatever the database's allowlist.
  if (database.allowed_ips && claims.rep === undefined && !allowlistOf(database.allowed_ips).allows(peer)) {
    throw dataAccessErrors.ipNotAllowed(database.name, peer);
  }
  // A database created for an upload has no content yet: only the upload, and replicas copying
  // the empty file it starts with, may reach it (never while the upload is being installed).
  if (
    database.awaiting_upload !== 0 &&
    purpose !== "upload" &&
    !(claims.rep !== undefined && database.awaiting_upload === 1)
  ) {
    throw dataAccessErrors.awaitingUpload(database.name);
  }
  // Several nodes share the store but each keeps only its own locations' files: a request for
  // a location held here is served here even when the primary is elsewhere (group across nodes).
  const primaryHere = deps.placement.holds(database.primary_location);
  if (!primaryHere && !(at && deps.placement.holds(at) && database.locations.includes(at))) {
    throw dataAccessErrors.servedElsewhere(database.name, database.primary_location);
  }
  // Replication tokens are the deployment's own: whatever a claim says, they copy whole files.
  const rights = claims.rep === undefined ? rightsOfClaims(claims) : undefined;
  return {
    database,
    path: deps.directory.pathOf(database, deps.files),
    canWrite: claims.a !== "ro",
    attachIds: new Set(claims.p?.roa?.ns ?? []),
    ...(rights ? { rights } : {}),
    ...(claims.rep !== undefined ? { replicaOf: claims.rep } : {}),
    ...(primaryHere ? {} : { primaryElsewhere: { token } }),
  };
}

async function refuseForeign(
  deps: DataAccessPorts,
  scope: { id: string } | { groupId: string },
): Promise<never> {
  const exists =
    "id" in scope
      ? (await deps.directory.find({ id: scope.id })) !== undefined
      : await deps.directory.groupExists(scope.groupId);
  if (!exists) {
    throw dataAccessErrors.ownerDeleted("id" in scope ? "database" : "group");
  }
  throw dataAccessErrors.otherDatabase();
}
