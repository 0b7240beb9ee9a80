/**
 * Where customers' encryption keys can appear in what Shoal logs or keeps about a request: the
 * data plane's key header and the create body's `remote_encryption`. For pino's `redact.paths`
 * (lib/logger.ts), which matches exact paths: a request object, its headers, a body, one level in.
 */
export const ENCRYPTION_KEY_LOG_PATHS = [
  'req.headers["x-turso-encryption-key"]',
  'headers["x-turso-encryption-key"]',
  '["x-turso-encryption-key"]',
  "encryption_key",
  "*.encryption_key",
  "remote_encryption.encryption_key",
  "*.remote_encryption.encryption_key",
  "body.remote_encryption.encryption_key",
  "remoteEncryptionKey",
  "*.remoteEncryptionKey",
] as const;

const REDACTED = "[redacted]";
const KEY_FIELDS = new Set(["encryption_key", "x-turso-encryption-key", "remoteencryptionkey"]);

/**
 * A copy of `value` with every key-bearing field replaced, at any depth (pino's paths stop at a
 * fixed depth): for a request body before it is fingerprinted, audited, stored or logged.
 */
export function withoutEncryptionKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutEncryptionKeys) as T;
  if (value === null || typeof value !== "object" || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      KEY_FIELDS.has(k.toLowerCase()) && v !== undefined && v !== null ? REDACTED : withoutEncryptionKeys(v);
  }
  return out as T;
}

/**
 * `text` with every occurrence of `secrets` replaced: for messages that quote something a client
 * sent (an error from a driver, a URL) and might therefore quote the key.
 */
export function scrubSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 8) out = out.split(s).join(REDACTED);
  return out;
}
