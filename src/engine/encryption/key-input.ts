import { EncryptionKeyError, UnsupportedCipherError } from "./errors.js";

/**
 * The ciphers the engine can encrypt a database with, and the key each takes. The bundled libSQL
 * (SQLite3 Multiple Ciphers) is built with one: AES-256 in CBC mode per page, no authentication tag.
 */
export const SUPPORTED_CIPHERS = { aes256cbc: { keyBytes: 32 } } as const;
export type Cipher = keyof typeof SUPPORTED_CIPHERS;

/**
 * Turso's ciphers (Platform API 2026-06). Each is authenticated encryption that Shoal's engine
 * doesn't have: accepting one of these names would claim a protection the files don't get.
 */
export const TURSO_CIPHERS = [
  "aes256gcm",
  "aes128gcm",
  "chacha20poly1305",
  "aegis128l",
  "aegis128x2",
  "aegis128x4",
  "aegis256",
  "aegis256x2",
  "aegis256x4",
] as const;

/** What a request asks for: the customer's key (decoded) and the cipher. */
export interface KeyInput {
  cipher: Cipher;
  key: Buffer;
}

const supportedList = () => Object.keys(SUPPORTED_CIPHERS).join(", ");

/**
 * Reads a cipher name. Absent, it is `fallback`: a branch's source's cipher, or else the one
 * cipher the engine has (naming none claims nothing the database won't get).
 */
export function parseCipher(name: unknown, field: string, fallback: Cipher = "aes256cbc"): Cipher {
  if (name === undefined || name === null || name === "") return fallback;
  if (typeof name !== "string") throw new UnsupportedCipherError(`${field} must be a string`);
  if (name in SUPPORTED_CIPHERS) return name as Cipher;
  if ((TURSO_CIPHERS as readonly string[]).includes(name)) {
    throw new UnsupportedCipherError(
      `${field} ${name} is not supported: this server's libSQL engine encrypts with aes256cbc ` +
        `(AES-256-CBC per page, without authentication tags); supported: ${supportedList()}`,
    );
  }
  throw new UnsupportedCipherError(`${field} ${printable(name)} is unknown; supported: ${supportedList()}`);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes a key given as standard, padded base64 (what Turso's clients send, in a body or the
 * `x-turso-encryption-key` header) and checks its length for `cipher`. Errors name `field` and
 * the length received, never the value: a nearly right key is still mostly a secret.
 */
export function parseKey(text: unknown, field: string, cipher: Cipher): Buffer {
  // In a body, a missing key is a malformed request (400); the data plane tells a request that
  // brought no key at all apart before it gets here (401, key-cache.ts).
  if (text === undefined || text === null || text === "") {
    throw new EncryptionKeyError("malformed", `${field} is required`);
  }
  if (typeof text !== "string") throw new EncryptionKeyError("malformed", `${field} must be a string`);
  if (!BASE64.test(text)) {
    throw new EncryptionKeyError(
      "malformed",
      `${field} is not standard base64 (A-Z, a-z, 0-9, "+", "/", padded with "=" to a multiple of 4 characters)`,
    );
  }
  const key = Buffer.from(text, "base64");
  const want = SUPPORTED_CIPHERS[cipher].keyBytes;
  if (key.length !== want) {
    throw new EncryptionKeyError(
      "malformed",
      `${field} must decode to ${want} bytes for ${cipher}; it decodes to ${key.length}`,
    );
  }
  return key;
}

/**
 * Reads `remote_encryption` from a create body: `{encryption_key, encryption_cipher}`. `inherited`
 * is the cipher of the source database when the new one is a branch of an encrypted one.
 */
export function parseRemoteEncryption(body: unknown, inherited?: Cipher): KeyInput {
  const field = "remote_encryption";
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new EncryptionKeyError("malformed", `${field} must be an object with encryption_key`);
  }
  const { encryption_key: key, encryption_cipher: name } = body as Record<string, unknown>;
  const cipher = parseCipher(name, `${field}.encryption_cipher`, inherited);
  if (inherited !== undefined && cipher !== inherited) {
    throw new UnsupportedCipherError(
      `${field}.encryption_cipher ${cipher} differs from the source database's ${inherited}: a branch keeps its source's cipher and key`,
    );
  }
  return { cipher, key: parseKey(key, `${field}.encryption_key`, cipher) };
}

/** A cipher name as it may be quoted back: short, and nothing that could forge a log line. */
function printable(name: string): string {
  const clean = name.slice(0, 40).replace(/[^\x20-\x7e]/g, "?");
  return JSON.stringify(name.length > 40 ? `${clean}...` : clean);
}
