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
