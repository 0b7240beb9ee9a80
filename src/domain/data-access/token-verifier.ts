import { createRemoteJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify } from "jose";
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
  /** Turso's fine-grained permissions, in tokens an identity provider signs. */
  perm?: unknown;
  /** Set on claims an organization's identity provider signed: the key set that verified them. */
  via?: { name: string; url: string };
}

/** A key set an organization trusts to sign tokens for its databases (`org jwks save`). */
export interface TrustedKeySet {
  name: string;
  url: string;
  /** When set, the `iss` every token must carry. */
  issuer: string | null;
  /** When set, a value the token's `aud` must hold. */
  audience: string | null;
}

/** What identity providers sign with; HMAC is never accepted (its secret would have to be shared). */
const PROVIDER_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];
/** How long claims a provider signed are trusted without checking its keys again. */
const PROVIDER_CLAIMS_TTL_SEC = 60;

function trusts(sets: readonly TrustedKeySet[], via: { name: string; url: string }): boolean {
  return sets.some((s) => s.name === via.name && s.url === via.url);
}

/**
 * Verified token claims, cached until the token expires: an Ed25519 verification costs more than
 * the rest of a point query. Revocation doesn't rely on the cache: generations are checked against
 * the database record on every request (a record at most `DIRECTORY_TTL_MS` old, so a rotation made
 * through another process applies here within that bound).
 */
export class DbTokenVerifier {
  private readonly cache = new Map<string, TokenClaims & { trustedUntil?: number }>();
  /** Each key set's keys, fetched when first needed, again for an unknown `kid` (jose's cache). */
  private readonly remoteSets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  constructor(
    private readonly deps: { dbTokenKey: SigningKey; apiTokenKey: SigningKey; clock: Clock },
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * Claims of a token verified before and not yet expired; no cryptography (the fast path).
   * `sets`: the key sets the database's organization trusts now; claims an identity provider
   * signed count only while their set is among them.
   */
  cached(token: string, sets: readonly TrustedKeySet[] = []): TokenClaims | undefined {
    const hit = this.cache.get(token);
    if (!hit) return undefined;
    const nowSec = this.deps.clock().getTime() / 1000;
    const fresh = (hit.exp === undefined || hit.exp > nowSec) && (hit.trustedUntil ?? Infinity) > nowSec;
    if (fresh && (hit.via === undefined || trusts(sets, hit.via))) return hit;
    this.cache.delete(token);
    return undefined;
  }

  /** `sets`: the key sets the database's organization trusts, tried for tokens Shoal didn't sign. */
  async verify(token: string, sets: readonly TrustedKeySet[] = []): Promise<TokenClaims> {
    const hit = this.cached(token, sets);
    if (hit) return hit;
    let claims: TokenClaims & { trustedUntil?: number };
    try {
      claims = (await verifyJwt(this.deps.dbTokenKey, token)) as TokenClaims;
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) throw dataAccessErrors.expired();
      if (sets.length === 0 || this.signedHere(token)) throw await this.invalid(token);
      claims = await this.verifyByProvider(token, sets);
      claims.trustedUntil = Math.floor(this.deps.clock().getTime() / 1000) + PROVIDER_CLAIMS_TTL_SEC;
    }
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(token, claims);
    return claims;
  }

  /** Whether the token names Shoal's own key (so no identity provider's key can be the one). */
  private signedHere(token: string): boolean {
    try {
      return decodeProtectedHeader(token).kid === this.deps.dbTokenKey.kid;
    } catch {
      return true;
    }
  }

  /** Tries each trusted key set in turn; the refusal says why the last one that could judge said no. */
  private async verifyByProvider(token: string, sets: readonly TrustedKeySet[]): Promise<TokenClaims> {
    let why = "no trusted key set holds the key that signed it";
    for (const set of sets) {
      try {
        const { payload } = await jwtVerify(token, this.remoteSet(set.url), {
          algorithms: PROVIDER_ALGORITHMS,
          ...(set.issuer ? { issuer: set.issuer } : {}),
          ...(set.audience ? { audience: set.audience } : {}),
          currentDate: this.deps.clock(),
        });
        return { ...(payload as TokenClaims), via: { name: set.name, url: set.url } };
      } catch (e) {
        if (e instanceof joseErrors.JWTExpired) throw dataAccessErrors.expired();
        if (e instanceof joseErrors.JWTClaimValidationFailed) why = `key set ${set.name}: ${e.message}`;
        else if (e instanceof joseErrors.JWKSTimeout || e instanceof TypeError)
          why = `key set ${set.name} could not be fetched from ${set.url}`;
        else if (!(e instanceof joseErrors.JWKSNoMatchingKey))
          why = `key set ${set.name}: ${(e as Error).message}`;
      }
    }
    throw dataAccessErrors.providerRefused(why);
  }

  private remoteSet(url: string): ReturnType<typeof createRemoteJWKSet> {
    let set = this.remoteSets.get(url);
    if (!set) {
      // A `kid` the cached keys lack makes jose fetch again, at most every 5 s: a rotated key
      // works within seconds, and a flood of forged kids can't turn into a flood of fetches.
      set = createRemoteJWKSet(new URL(url), {
        timeoutDuration: 5000,
        cooldownDuration: 5_000,
        cacheMaxAge: 600_000,
      });
      this.remoteSets.set(url, set);
    }
    return set;
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
