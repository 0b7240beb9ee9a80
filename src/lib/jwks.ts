import type { LookupAddress } from "node:dns";
import { lookup } from "node:dns/promises";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { createLocalJWKSet, type JSONWebKeySet } from "jose";

/** Why a key set URL can't be trusted: said to the caller as it is. */
export class JwksUnusableError extends Error {}

/** Whether key sets may live on loopback, private and link-local addresses (a self-hosted provider). */
export interface JwksFetchPolicy {
  allowPrivate: boolean;
}

/** The policy `SHOAL_JWKS_PRIVATE_ADDRESSES` sets. */
export function jwksPolicy(privateAddresses: "allow" | "refuse"): JwksFetchPolicy {
  return { allowPrivate: privateAddresses === "allow" };
}

const MAX_BYTES = 256 * 1024;
const TIMEOUT_MS = 5000;
/** After a failed fetch, the same URL isn't fetched again for this long, whoever asks. */
const BACKOFF_MS = 5000;
const KEY_TYPES = new Set(["RSA", "EC", "OKP"]);
const failedAt = new Map<string, number>();

/** Addresses a server-side fetch must not reach unless the operator says so (SSRF). */
function isPrivate(address: string): boolean {
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  if (isIP(v4) === 4) {
    const [a = 0, b = 0] = v4.split(".").map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      a >= 224
    );
  }
  const v6 = address.toLowerCase();
  return v6 === "::" || v6 === "::1" || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6);
}

/**
 * The address to connect to: the host resolved once, and every address it resolves to checked,
 * so a name can't point at an internal service.
 */
async function resolveAllowed(
  url: URL,
  policy: JwksFetchPolicy,
): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const found = isIP(host)
    ? [{ address: host, family: isIP(host) }]
    : await lookup(host, { all: true }).catch(() => []);
  if (found.length === 0) throw new JwksUnusableError(`${url.host} doesn't resolve`);
  if (!policy.allowPrivate && found.some((a) => isPrivate(a.address)))
    throw new JwksUnusableError(
      `${url.host} is a loopback, private or link-local address, which this server doesn't fetch from (SHOAL_JWKS_PRIVATE_ADDRESSES=allow permits it)`,
    );
  return found[0]!;
}

/**
 * Fetches a key set URL the one way Shoal ever does, when an organization saves it and each time
 * its keys are read again: https or http only, no credentials in the URL, no private addresses
 * unless allowed, no redirects, an answer of at most 256 KiB within 5 s, and no second try within
 * 5 s of a failure (so tokens naming unknown keys can't make Shoal hammer a provider).
 */
export async function jwksFetch(
  url: string,
  policy: JwksFetchPolicy,
  init: { signal?: AbortSignal; headers?: Record<string, string> | Headers } = {},
): Promise<Response> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new JwksUnusableError(`${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    throw new JwksUnusableError(
      `the key set URL must be https or http, not ${parsed.protocol.replace(":", "")}`,
    );
  if (parsed.username || parsed.password)
    throw new JwksUnusableError("the key set URL may not hold credentials");
  const failed = failedAt.get(parsed.href);
  if (failed !== undefined && Date.now() - failed < BACKOFF_MS)
    throw new JwksUnusableError(`${url} failed moments ago and isn't fetched again yet`);
  // Refused by policy: nothing was fetched, so nothing failed.
  const target = await resolveAllowed(parsed, policy);
  try {
    const text = await pinnedGet(parsed, target, init);
    failedAt.delete(parsed.href);
    return new Response(text, { status: 200, headers: { "content-type": "application/json" } });
  } catch (e) {
    if (failedAt.size > 10_000) failedAt.clear();
    failedAt.set(parsed.href, Date.now());
    throw e;
  }
}

/**
 * GETs the URL from exactly the address that was checked (the connection's lookup is pinned to
 * it, so a second DNS answer can't send it elsewhere), and reads a 200's body up to the limit.
 */
function pinnedGet(
  url: URL,
  target: { address: string; family: number },
  init: { signal?: AbortSignal; headers?: Record<string, string> | Headers },
): Promise<string> {
  const failed = (why: string) => new JwksUnusableError(`${url.href} ${why}`);
  const headers = init.headers instanceof Headers ? Object.fromEntries(init.headers) : (init.headers ?? {});
  return new Promise((resolve, reject) => {
    const req = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, {
      headers,
      signal: init.signal ?? AbortSignal.timeout(TIMEOUT_MS),
      lookup: (_host, opts, cb) => {
        // Node asks for every address when `all` is set, and for one otherwise.
        if ((opts as { all?: boolean }).all) (cb as (e: null, a: LookupAddress[]) => void)(null, [target]);
        else cb(null, target.address, target.family);
      },
    });
    req.on("error", () => reject(failed("could not be fetched (no answer, or the connection failed)")));
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        res.resume();
        return reject(failed("redirects, and redirects aren't followed: give the final URL"));
      }
      if (status !== 200) {
        res.resume();
        return reject(failed(`answered ${status}, not 200`));
      }
      if (Number(res.headers["content-length"] ?? 0) > MAX_BYTES) {
        res.destroy();
        return reject(failed("answered more than 256 KiB"));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BYTES) {
          res.destroy();
          reject(failed("answered more than 256 KiB"));
        } else chunks.push(chunk);
      });
      res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
      res.on("error", () => reject(failed("could not be fetched (the answer was cut)")));
    });
    req.end();
  });
}

/**
 * Fetches a JSON Web Key Set and checks that it is one: JSON whose `keys` hold at least one
 * public key of a type tokens are signed with (RSA, EC, OKP), and no private key. Done when an
 * organization saves the URL, so a typo or a page of HTML is refused then, not at the first sign-in.
 */
export async function fetchJwks(url: string, policy: JwksFetchPolicy): Promise<JSONWebKeySet> {
  const text = await (await jwksFetch(url, policy)).text();
  let jwks: JSONWebKeySet;
  try {
    jwks = JSON.parse(text) as JSONWebKeySet;
    createLocalJWKSet(jwks);
  } catch {
    throw new JwksUnusableError(`${url} doesn't serve a JSON Web Key Set (a JSON object with "keys")`);
  }
  if (jwks.keys.some((k) => k.d !== undefined))
    throw new JwksUnusableError(
      `${url} publishes a private key: fix the identity provider before trusting it`,
    );
  if (!jwks.keys.some((k) => KEY_TYPES.has(String(k.kty))))
    throw new JwksUnusableError(`${url} holds no public RSA, EC or OKP key`);
  return jwks;
}
