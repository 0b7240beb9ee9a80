import { createHash, randomBytes } from "node:crypto";

/**
 * Hash under which an API token is stored. Tokens are high-entropy random values, so a fast
 * cryptographic hash is enough (a slow password hash would only add latency to every request).
 */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("base64url");
}

/** A random secret rendered as base64url. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** SHA-256 of a text, hex-encoded: a fingerprint, not a secret. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
