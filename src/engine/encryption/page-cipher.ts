import { createCipheriv, createDecipheriv, createHash } from "node:crypto";
import { EncryptionKeyError } from "./errors.js";
import type { DatabaseKey } from "./keys.js";

/**
 * The engine's page cipher, in node:crypto: SQLite3 Multiple Ciphers' "aes256cbc" (wxSQLite3
 * AES-256, non-legacy), as bundled by libsql 0.5.x. It produces the engine's bytes exactly, so
 * Shoal can decrypt pages where SQLite can't help (a file or WAL frames served to a key holder)
 * and encrypt an uploaded plain file page by page before it touches the disk. The tests compare
 * it with the engine on real files in both directions: an engine upgrade that changes the format
 * fails them.
 *
 * The format: the AES key is SHA-256 applied 4002 times to the first 32 bytes of the passphrase
 * (padded with a fixed string); each page is AES-256-CBC under SHA-256(key, page number, "sAlT"),
 * with an IV made from the page number; no salt, no tag. Page 1 keeps header bytes 16..23 (page
 * size, versions, reserved bytes) in clear, parking their ciphertext at bytes 8..15.
 */

const PAD = Buffer.from("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A", "hex");
const MAGIC = Buffer.from("SQLite format 3\0", "latin1");
const KDF_ROUNDS = 4001;

/** The AES key the engine derives from a passphrase (about 15 ms of hashing: cache the result). */
export function engineAesKey(passphrase: string): Buffer {
  const bytes = Buffer.from(passphrase, "utf8").subarray(0, 32);
  let digest = createHash("sha256")
    .update(Buffer.concat([bytes, PAD]).subarray(0, 32))
    .digest();
  for (let i = 0; i < KDF_ROUNDS; i++) digest = createHash("sha256").update(digest).digest();
  return digest;
}

/** Encrypts and decrypts the pages of one database (one key). */
export class PageCipher {
  constructor(private readonly aesKey: Buffer) {}

  static fromPassphrase(passphrase: string): PageCipher {
    return new PageCipher(engineAesKey(passphrase));
  }

  /** The engine's ciphertext of page `page` (1-based) holding `data`. */
  encrypt(page: number, data: Buffer): Buffer {
    if (page !== 1) return this.aes(true, page, data);
    const out = Buffer.from(data);
    this.aes(true, 1, data.subarray(0, 16)).copy(out, 0);
    this.aes(true, 1, data.subarray(16)).copy(out, 16);
    out.copyWithin(8, 16, 24);
    data.copy(out, 16, 16, 24);
    return out;
  }

  /**
   * The plain page. Page 1 is checked: its clear header bytes must match the decrypted ones, else
   * the key is wrong (or the page isn't this cipher's) and undefined is returned.
   */
  decrypt(page: number, data: Buffer): Buffer | undefined {
    if (page !== 1) return this.aes(false, page, data);
    const out = Buffer.from(data);
    data.copy(out, 16, 8, 16);
    this.aes(false, 1, out.subarray(16)).copy(out, 16);
    if (!data.subarray(16, 24).equals(out.subarray(16, 24))) return undefined;
    MAGIC.copy(out, 0);
    return out;
  }

  /** Encrypts a run of whole pages in place, the first being page `first`. */
  encryptPages(first: number, pages: Buffer, pageSize: number): void {
    this.each(first, pages, pageSize, (n, p) => this.encrypt(n, p));
  }

  /** Decrypts a run of whole pages in place; a wrong key fails on page 1 with "invalid". */
  decryptPages(first: number, pages: Buffer, pageSize: number): void {
    this.each(first, pages, pageSize, (n, p) => {
      const plain = this.decrypt(n, p);
      if (!plain) throw new EncryptionKeyError("invalid");
      return plain;
    });
  }

  /**
   * Decrypts the page images of WAL frames in place (24-byte frame headers stay as they are: their
   * checksums cover the encrypted bytes, and libSQL's sync client accepts them so).
   */
  decryptFrames(frames: Buffer, pageSize: number): void {
    const frameBytes = 24 + pageSize;
    for (let at = 0; at + frameBytes <= frames.length; at += frameBytes) {
      this.decryptPages(frames.readUInt32BE(at), frames.subarray(at + 24, at + frameBytes), pageSize);
    }
  }

  private each(first: number, pages: Buffer, pageSize: number, fn: (n: number, p: Buffer) => Buffer): void {
    if (pages.length % pageSize !== 0)
      throw new Error(`${pages.length} bytes are not whole ${pageSize}-byte pages`);
    for (let i = 0; i * pageSize < pages.length; i++) {
      const page = pages.subarray(i * pageSize, (i + 1) * pageSize);
      fn(first + i, page).copy(page);
    }
  }

  private aes(encrypt: boolean, page: number, data: Buffer): Buffer {
    const make = encrypt ? createCipheriv : createDecipheriv;
    const c = make("aes-256-cbc", this.pageKey(page), pageIv(page));
    c.setAutoPadding(false);
    return Buffer.concat([c.update(data), c.final()]);
  }

  private pageKey(page: number): Buffer {
    const seed = Buffer.alloc(40);
    this.aesKey.copy(seed, 0);
    seed.writeUInt32LE(page, 32);
    seed.write("sAlT", 36, "latin1");
    return createHash("sha256").update(seed).digest();
  }
}

/** The IV of a page: MD5 of four steps of the Park-Miller-style generator wxSQLite3 seeds with it. */
function pageIv(page: number): Buffer {
  const seed = Buffer.alloc(16);
  let z = page + 1;
  for (let j = 0; j < 4; j++) {
    // MODMULT(52774, 40692, 3791, 2147483399, z), with C's truncating integer division.
    const q = Math.trunc(z / 52774);
    z = 40692 * (z - 52774 * q) - 3791 * q;
    if (z < 0) z += 2147483399;
    seed.writeInt32LE(z | 0, 4 * j);
  }
  return createHash("md5").update(seed).digest();
}

const ciphers = new WeakMap<DatabaseKey, PageCipher>();

/** The page cipher of a verified key, derived once per key object (the key cache keeps one per database). */
export function pageCipherFor(key: DatabaseKey): PageCipher {
  let c = ciphers.get(key);
  if (!c) {
    c = PageCipher.fromPassphrase(key.passphrase);
    ciphers.set(key, c);
  }
  return c;
}
