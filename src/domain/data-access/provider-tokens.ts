import { createRemoteJWKSet, customFetch, errors as joseErrors, jwtVerify } from "jose";
import { type JwksFetchPolicy, jwksFetch } from "../../lib/jwks.js";
import type { Clock } from "../../lib/time.js";
import { dataAccessErrors } from "./errors.js";

/** A key set an organization trusts to sign tokens for its databases (`org jwks save`). */
export interface TrustedKeySet {
  name: string;
  url: string;
  /** When set, the `iss` every token must carry. */
  issuer: string | null;
  /** When set, a value the token's `aud` must hold. */
  audience: string | null;
}

/** The key sets one organization trusts: a provider's token is judged against these only. */
export interface OrgTrust {
  orgId: string;
  sets: readonly TrustedKeySet[];
}

/** The trust decision that let a provider's token in, kept with its claims and checked on reuse. */
export interface ProviderVerdict extends TrustedKeySet {
  orgId: string;
}

/** The claims Shoal reads from a provider's token (Turso's template); nothing else is taken from it. */
export interface ProviderClaims {
  a?: string;
  id?: string;
  gid?: string;
  perm?: unknown;
  exp?: number;
  via: ProviderVerdict;
}

/** What identity providers sign with; HMAC is never accepted (its secret would have to be shared). */
const ALGORITHMS = [
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
const MAX_REMOTE_SETS = 256;

/** Whether claims verified under `via` may still be used for a database of the organization `trust` describes. */
export function stillTrusted(via: ProviderVerdict, trust: OrgTrust | undefined): boolean {
  return (
    trust !== undefined &&
    via.orgId === trust.orgId &&
    trust.sets.some(
      (s) =>
        s.name === via.name && s.url === via.url && s.issuer === via.issuer && s.audience === via.audience,
    )
  );
}

/**
 * Verifies tokens an organization's identity providers signed, against the key sets that
 * organization trusts (Turso's JWKS sign-in). Each set's keys are fetched through `jwksFetch` and
 * kept for a minute; a `kid` they lack makes them fetched again, at most every 5 s.
 */
export class ProviderKeySets {
  /** Each URL's keys (jose's cache), the least recently used dropped past MAX_REMOTE_SETS. */
  private readonly remote = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  constructor(
    private readonly policy: JwksFetchPolicy,
    private readonly clock: Clock,
  ) {}

  /** The token's claims once one of the organization's sets verifies it; a 401 saying why not otherwise. */
  async verify(token: string, trust: OrgTrust): Promise<ProviderClaims> {
    // Kept vague on purpose: anyone can send a token, and set names and URLs are the organization's.
    let why = "no key set the organization trusts holds the key that signed it";
    for (const set of trust.sets) {
      try {
        const { payload } = await jwtVerify(token, this.keysAt(set.url), {
          algorithms: ALGORITHMS,
          ...(set.issuer ? { issuer: set.issuer } : {}),
          ...(set.audience ? { audience: set.audience } : {}),
          currentDate: this.clock(),
        });
        const { a, id, gid, perm, exp } = payload as Record<string, unknown>;
        return {
          ...(typeof a === "string" ? { a } : a === undefined ? {} : { a: String(a) }),
          ...(typeof id === "string" ? { id } : {}),
          ...(typeof gid === "string" ? { gid } : {}),
          ...(perm !== undefined ? { perm } : {}),
          ...(typeof exp === "number" ? { exp } : {}),
          via: { ...set, orgId: trust.orgId },
        };
      } catch (e) {
        if (e instanceof joseErrors.JWTExpired) throw dataAccessErrors.expired();
        if (e instanceof joseErrors.JWTClaimValidationFailed)
          why = "its issuer or audience isn't one the organization trusts";
        else if (
          !(e instanceof joseErrors.JWKSNoMatchingKey) &&
          !(e instanceof joseErrors.JWSSignatureVerificationFailed)
        )
          why = "a key set the organization trusts couldn't be read just now";
      }
    }
    throw dataAccessErrors.providerRefused(why);
  }

  private keysAt(url: string): ReturnType<typeof createRemoteJWKSet> {
    let set = this.remote.get(url);
    if (set) {
      this.remote.delete(url);
    } else {
      set = createRemoteJWKSet(new URL(url), {
        timeoutDuration: 5000,
        cooldownDuration: 5000,
        // A key the provider withdraws stops working within about this long.
        cacheMaxAge: 60_000,
        [customFetch]: (
          u: string,
          init: { signal?: AbortSignal; headers?: Record<string, string> | Headers },
        ) => jwksFetch(u, this.policy, init),
      });
      if (this.remote.size >= MAX_REMOTE_SETS) this.remote.delete(this.remote.keys().next().value!);
    }
    this.remote.set(url, set);
    return set;
  }
}
