import { newTokenId } from "../../lib/ids.js";
import { jwtSegments, signJwt, verifyJwtSignature } from "../../lib/jwt.js";
import { hashToken } from "../../lib/secrets.js";
import type { Principal } from "../core/context.js";
import { accountErrors } from "./errors.js";
import type { AccountPorts } from "./ports.js";

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
export async function authenticate(
  deps: Pick<AccountPorts, "store" | "dbTokenKey">,
  token: string,
): Promise<Principal> {
  const row = await deps.store.read((r) => r.apiTokens.findByHash(hashToken(token)));
  if (!row) {
    if (jwtSegments(token) !== 3) throw accountErrors.notAJwt();
    if (await isDatabaseToken(deps, token)) throw accountErrors.databaseTokenOnApi();
    throw accountErrors.invalidApiToken();
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

/** Whether an unknown bearer token is one of this service's database tokens (only on the failure path). */
function isDatabaseToken(deps: Pick<AccountPorts, "dbTokenKey">, token: string): Promise<boolean> {
  return verifyJwtSignature(deps.dbTokenKey, token).then(
    () => true,
    () => false,
  );
}

/** Generates a new token value: an EdDSA JWT whose `jti` is the token id (Turso's format). */
export async function newApiTokenValue(
  deps: Pick<AccountPorts, "apiTokenKey" | "clock">,
): Promise<{ id: string; token: string }> {
  const id = newTokenId();
  const token = await signJwt(deps.apiTokenKey, { jti: id, iat: Math.floor(deps.clock().getTime() / 1000) });
  return { id, token };
}
