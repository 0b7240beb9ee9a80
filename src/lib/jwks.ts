import { createLocalJWKSet, type JSONWebKeySet } from "jose";

/** Why a key set URL can't be trusted: said to the caller as it is. */
export class JwksUnusableError extends Error {}

const MAX_BYTES = 256 * 1024;
const KEY_TYPES = new Set(["RSA", "EC", "OKP"]);

/**
 * Fetches a JSON Web Key Set and checks that it is one: an `https:` or `http:` URL answering 200
 * within `timeoutMs` with at most 256 KiB of JSON whose `keys` hold at least one public key of a
 * type tokens are signed with (RSA, EC, OKP). Done once when an organization saves the URL, so a
 * typo or a page of HTML is refused then, not at the first sign-in.
 */
export async function fetchJwks(url: string, timeoutMs = 5000): Promise<JSONWebKeySet> {
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
  let text: string;
  try {
    const res = await fetch(parsed, { signal: AbortSignal.timeout(timeoutMs), redirect: "follow" });
    if (res.status !== 200) throw new JwksUnusableError(`${url} answered ${res.status}, not 200`);
    const body = await res.arrayBuffer();
    if (body.byteLength > MAX_BYTES) throw new JwksUnusableError(`${url} answered more than 256 KiB`);
    text = new TextDecoder().decode(body);
  } catch (e) {
    if (e instanceof JwksUnusableError) throw e;
    const cause = (e as { cause?: { message?: string } }).cause?.message ?? (e as Error).message;
    throw new JwksUnusableError(`${url} could not be fetched: ${cause}`);
  }
  let jwks: JSONWebKeySet;
  try {
    jwks = JSON.parse(text) as JSONWebKeySet;
    createLocalJWKSet(jwks);
  } catch {
    throw new JwksUnusableError(`${url} doesn't serve a JSON Web Key Set (a JSON object with "keys")`);
  }
  const usable = jwks.keys.filter((k) => KEY_TYPES.has(String(k.kty)) && k.d === undefined);
  if (usable.length === 0)
    throw new JwksUnusableError(
      `${url} holds no public RSA, EC or OKP key (and private keys are never accepted)`,
    );
  if (jwks.keys.some((k) => k.d !== undefined))
    throw new JwksUnusableError(
      `${url} publishes a private key: fix the identity provider before trusting it`,
    );
  return jwks;
}
