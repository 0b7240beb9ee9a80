import { errors as joseErrors } from "jose";
import type { UnauthenticatedError } from "../../errors.js";
import { verifyJwt, verifyJwtSignature } from "../../lib/jwt.js";
import type { SigningKey } from "../../lib/signing-keys.js";
import type { Clock } from "../../lib/time.js";
import { dataAccessErrors } from "./errors.js";

export interface TokenClaims {
  a?: string;
  id?: string;
  /** Location of the replica an internal replication token belongs to. */
  rep?: string;
  gid?: string;
  gen?: number;
  ggen?: number;
  exp?: number;
  jti?: string;
  p?: { roa?: { ns?: string[] } };
}

/**
 * Verified token claims, cached until the token expires: an Ed25519 verification costs more than
 * the rest of a point query. Revocation doesn't rely on the cache: generations are checked against
 * the database record on every request (a record at most `DIRECTORY_TTL_MS` old, so a rotation made
 * through another process applies here within that bound).
 */
export class DbTokenVerifier {
  private readonly cache = new Map<string, TokenClaims>();

  constructor(
    private readonly deps: { dbTokenKey: SigningKey; apiTokenKey: SigningKey; clock: Clock },
    private readonly maxEntries = 10_000,
  ) {}

  /** Claims of a token verified before and not yet expired; no cryptography (the fast path). */
  cached(token: string): TokenClaims | undefined {
    const hit = this.cache.get(token);
    if (!hit) return undefined;
    if (hit.exp === undefined || hit.exp > this.deps.clock().getTime() / 1000) return hit;
    this.cache.delete(token);
    return undefined;
  }

  async verify(token: string): Promise<TokenClaims> {
    const hit = this.cached(token);
    if (hit) return hit;
    let claims: TokenClaims;
    try {
      claims = (await verifyJwt(this.deps.dbTokenKey, token)) as TokenClaims;
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) throw dataAccessErrors.expired();
      throw await this.invalid(token);
    }
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(token, claims);
    return claims;
  }

  /** The refusal of a token that isn't a database token, saying what it is when that helps. */
  private async invalid(token: string): Promise<UnauthenticatedError> {
    const isApiToken = await verifyJwtSignature(this.deps.apiTokenKey, token).then(
      () => true,
      () => false,
    );
    return isApiToken ? dataAccessErrors.apiTokenOnData() : dataAccessErrors.notADatabaseToken();
  }
}
