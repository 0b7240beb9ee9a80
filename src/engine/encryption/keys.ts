import { hkdfSync, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto";
import { EncryptionKeyError } from "./errors.js";
import type { Cipher, KeyInput } from "./key-input.js";

/**
 * What Shoal keeps about an encrypted database (in the control plane; none of it is secret):
 * the cipher, a random salt, and a check value that tells the right key from a wrong one. A
 * branch or a point-in-time restore copies its source's pages as they are, so it inherits all
 * three with the key.
 */
export interface EncryptionParams {
  cipher: Cipher;
  /** 16 random bytes, base64. */
  salt: string;
  /** PBKDF2 of the key under the salt, 16 bytes, base64 (see `keyCheck`). */
  check: string;
}

/**
 * A verified key in the form the engine takes: never stored, never logged, held in memory only
 * while a database is in use (key-cache.ts).
 */
export interface DatabaseKey {
  readonly cipher: Cipher;
  /** The `encryptionKey` string to open the database with. */
  readonly passphrase: string;
  /** The database's check value: connections opened with this key are tagged with it. */
  readonly check: string;
}

/**
 * Rounds of the check's PBKDF2-HMAC-SHA256. Each costs two SHA-256 compressions, so 4096 rounds
 * cost a guesser at least what the engine's own key stretching does (4002 SHA-256 of the
 * passphrase) when trying keys against a stolen file: a copy of the control plane makes a weak
 * key no easier to guess than a copy of the file would. Native, it takes about a millisecond.
 */
export const CHECK_ROUNDS = 4096;
const CHECK_BYTES = 16;
const PASSPHRASE_INFO = "shoal/engine-passphrase/v1";
const CHECK_INFO = "shoal/key-check/v1";

/**
 * The engine's passphrase for a key. libSQL reads only the first 32 bytes of the passphrase
 * string (as UTF-8), so the 44-character base64 of a 32-byte key would lose a quarter of it, and
 * two databases with the same key would get the same page keys (the engine has no salt). Instead:
 * HKDF-SHA256 of the key under the database's salt, 24 bytes, in unpadded base64url: exactly 32
 * characters, 6 random bits in each, printable and safe in SQL strings and URIs.
 */
export function enginePassphrase(key: Buffer, salt: Buffer): string {
  return Buffer.from(hkdfSync("sha256", key, salt, PASSPHRASE_INFO, 24)).toString("base64url");
}

/**
 * The check value: one-way, salted per database, and slow enough (CHECK_ROUNDS) not to be the
 * easier target. It lets Shoal say "wrong key" for certain before opening any file (a damaged
 * page 1 also reads as SQLITE_NOTADB) and never keeps anything that opens the data.
 */
export function keyCheck(key: Buffer, salt: Buffer): Buffer {
  const s = Buffer.concat([salt, Buffer.from(CHECK_INFO)]);
  return pbkdf2Sync(key, s, CHECK_ROUNDS, CHECK_BYTES, "sha256");
}

/** Parameters for a new encrypted database: a fresh salt, and the key's check under it. */
export function newEncryption(input: KeyInput): { params: EncryptionParams; key: DatabaseKey } {
  const salt = randomBytes(16);
  const check = keyCheck(input.key, salt).toString("base64");
  const params: EncryptionParams = { cipher: input.cipher, salt: salt.toString("base64"), check };
  return { params, key: { cipher: input.cipher, passphrase: enginePassphrase(input.key, salt), check } };
}

/**
 * The engine key of a database for a key a request brought. Throws `EncryptionKeyError("invalid")`
 * when the key doesn't match the database's check (the same answer for any wrong key).
 */
export function unlockDatabase(params: EncryptionParams, key: Buffer): DatabaseKey {
  const salt = Buffer.from(params.salt, "base64");
  const want = Buffer.from(params.check, "base64");
  const got = keyCheck(key, salt);
  if (want.length !== got.length || !timingSafeEqual(want, got)) throw new EncryptionKeyError("invalid");
  return { cipher: params.cipher, passphrase: enginePassphrase(key, salt), check: params.check };
}
