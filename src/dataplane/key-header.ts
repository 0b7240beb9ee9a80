import type { IncomingMessage } from "node:http";

/**
 * The `x-turso-encryption-key` header of a request (the first, if repeated): the base64 key of an
 * encrypted database, sent by `@libsql/client` (`remoteEncryptionKey`), libSQL's sync client and
 * the turso CLI. Read here only; never logged (lib/redact-keys.ts).
 */
export function keyHeader(req: IncomingMessage): string | undefined {
  const v = req.headers["x-turso-encryption-key"];
  return Array.isArray(v) ? v[0] : v;
}

/** The `x-turso-encryption-cipher` header (the turso CLI's uploads, @tursodatabase/sync). */
export function cipherHeader(req: IncomingMessage): string | undefined {
  const v = req.headers["x-turso-encryption-cipher"];
  return Array.isArray(v) ? v[0] : v;
}
