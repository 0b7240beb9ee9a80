import { decodeProtectedHeader, errors as joseErrors } from "jose";
import type { UnauthenticatedError } from "../../errors.js";
import type { JwksFetchPolicy } from "../../lib/jwks.js";
import { verifyJwt, verifyJwtSignature } from "../../lib/jwt.js";
import type { SigningKey } from "../../lib/signing-keys.js";
import { type Clock, systemClock } from "../../lib/time.js";
import { dataAccessErrors } from "./errors.js";
import { type OrgTrust, ProviderKeySets, type ProviderVerdict, stillTrusted } from "./provider-tokens.js";

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
  /** Set on claims an organization's identity provider signed: the trust decision that let them in. */
  via?: ProviderVerdict;
}

/** How long claims a provider signed are trusted before the signature is checked against its keys again. */
const PROVIDER_CLAIMS_TTL_SEC = 60;

/**
 * Verified token claims, cached until the token expires: an Ed25519 verification costs more than
 * the rest of a point query. Revocation doesn't rely on the cache: generations are checked against
 * the database record on every request (a record at most `DIRECTORY_TTL_MS` old, so a rotation made
 * through another process applies here within that bound).
 */
export class DbTokenVerifier {
  private readonly cache = new Map<string, TokenClaims & { trustedUntil?: number }>();
  private last: { token: string; claims: TokenClaims & { trustedUntil?: number } } | undefined;
  private readonly providers: ProviderKeySets;

  constructor(
    private readonly deps: {
      dbTokenKey: SigningKey;
      apiTokenKey: SigningKey;
      clock: Clock;
      /** Where identity providers' key sets may be fetched from (lib/jwks.ts). */
      jwksPolicy?: JwksFetchPolicy;
    },
    private readonly maxEntries = 10_000,
  ) {
    this.providers = new ProviderKeySets(deps.jwksPolicy ?? { allowPrivate: false }, () => deps.clock());
  }

  /**
   * Claims of a token verified before and not yet expired; no cryptography (the fast path).
   * `trust`: the key sets the database's organization trusts now. Claims an identity provider
   * signed count only for that same organization, while it trusts the very set (name, URL, issuer
   * and audience) that verified them, and for a minute at most.
   */
  cached(token: string, trust?: OrgTrust): TokenClaims | undefined {
    // A client sends the same token request after request: comparing it with the last one costs
    // less than hashing its few hundred characters for the map.
    const last = this.last;
    const own = this.fresh(
      token,
      last !== undefined && last.token === token ? last.claims : this.lookup(token),
    );
    if (own || !trust) return own;
    // A provider's verdict is kept under its organization: another organization never finds it.
    const key = `${trust.orgId}\n${token}`;
    const hit = this.fresh(key, this.cache.get(key));
    return hit?.via && stillTrusted(hit.via, trust) ? hit : undefined;
  }

  /** The verified claims of a token, remembered as the last one looked up. */
  private lookup(token: string): (TokenClaims & { trustedUntil?: number }) | undefined {
    const claims = this.cache.get(token);
    if (claims !== undefined) this.last = { token, claims };
    return claims;
  }

  /** The entry if it hasn't expired; an expired one is forgotten. */
  private fresh(
    key: string,
    hit: (TokenClaims & { trustedUntil?: number }) | undefined,
  ): TokenClaims | undefined {
    if (!hit) return undefined;
    // The system clock's time without building a Date: this runs for every request.
    const nowSec = (this.deps.clock === systemClock ? Date.now() : this.deps.clock().getTime()) / 1000;
    if ((hit.exp === undefined || hit.exp > nowSec) && (hit.trustedUntil ?? Infinity) > nowSec) return hit;
    this.cache.delete(key);
    return undefined;
  }

  /** `trust`: the key sets the database's organization trusts, tried for tokens Shoal didn't sign. */
  async verify(token: string, trust?: OrgTrust): Promise<TokenClaims> {
    const hit = this.cached(token, trust);
    if (hit) return hit;
    let claims: TokenClaims & { trustedUntil?: number };
    try {
      claims = (await verifyJwt(this.deps.dbTokenKey, token)) as TokenClaims;
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) throw dataAccessErrors.expired();
      if (!trust?.sets.length || this.signedHere(token)) throw await this.invalid(token);
      claims = await this.providers.verify(token, trust);
      claims.trustedUntil = Math.floor(this.deps.clock().getTime() / 1000) + PROVIDER_CLAIMS_TTL_SEC;
      // Keyed by organization too: the same token may be judged differently by another one.
      this.remember(`${trust.orgId}\n${token}`, claims);
      return claims;
    }
    this.remember(token, claims);
    return claims;
  }

  /**
   * Full, the oldest entry goes (a Map keeps insertion order): a flood of new tokens costs the
   * tokens in use one verification each at most, rather than emptying the cache for everyone.
   */
  private remember(key: string, claims: TokenClaims & { trustedUntil?: number }): void {
    if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, claims);
  }

  /** Whether the token names Shoal's own key (so no identity provider's key can be the one). */
  private signedHere(token: string): boolean {
    try {
      return decodeProtectedHeader(token).kid === this.deps.dbTokenKey.kid;
    } catch {
      return true;
    }
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
