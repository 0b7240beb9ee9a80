import { type JWTPayload, jwtVerify, SignJWT } from "jose";
import type { SigningKey } from "./signing-keys.js";

/** Signs `claims` as an EdDSA (Ed25519) JWT, the algorithm libSQL servers and Turso use. */
export async function signJwt(key: SigningKey, claims: JWTPayload): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "EdDSA", typ: "JWT", kid: key.kid })
    .sign(key.privateKey);
}

/** Verifies signature and `exp`; returns the claims or throws jose's error. */
export async function verifyJwt(key: SigningKey, token: string): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, key.publicKey, { algorithms: ["EdDSA", "Ed25519"] });
  return payload;
}

/**
 * Verifies the signature only, accepting an expired token: for acting on a token the bearer holds
 * (revoking it), where its expiry doesn't matter.
 */
export async function verifyJwtSignature(key: SigningKey, token: string): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, key.publicKey, {
    algorithms: ["EdDSA", "Ed25519"],
    currentDate: new Date(0),
  });
  return payload;
}

/** Number of dot-separated segments; a JWT has exactly three. */
export function jwtSegments(token: string): number {
  return token.split(".").length;
}
