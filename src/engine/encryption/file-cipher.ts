import { closeSync, openSync, readSync } from "node:fs";
import { open } from "node:fs/promises";
import type { PageCipher } from "./page-cipher.js";

/** Pages handled per step: 1 MiB at 4 KiB pages. Memory stays at about twice this per stream. */
export const CHUNK_PAGES = 256;

const MAGIC = "SQLite format 3\u0000";

/** What a database file's first bytes say about it. */
export type FileState = "missing" | "empty" | "plain" | "encrypted" | "unknown";

/**
 * Tells a plain SQLite file from one the engine encrypted, by its first 24 bytes: a plain file
 * starts with SQLite's magic string; an encrypted one has ciphertext there but keeps the header
 * bytes 16..23 in clear (page size, format versions 1 or 2, and the fixed 64/32/32 payload
 * fractions). Anything else is not a database either way ("unknown": damaged, or not SQLite).
 */
export function fileState(path: string): FileState {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return "missing";
  }
  const head = Buffer.alloc(24);
  let read: number;
  try {
    read = readSync(fd, head, 0, 24, 0);
  } finally {
    closeSync(fd);
  }
  if (read === 0) return "empty";
  if (read < 24) return "unknown";
  if (head.toString("latin1", 0, 16) === MAGIC) return "plain";
  const fractions = head[21] === 64 && head[22] === 32 && head[23] === 32;
  const versions = [head[18], head[19]].every((v) => v === 1 || v === 2);
  return fractions && versions && pageSizeOf(head) !== undefined ? "encrypted" : "unknown";
}

/** The page size a header (plain, or encrypted page 1: bytes 16..17 are clear in both) gives. */
export function pageSizeOf(head: Buffer): number | undefined {
  const raw = head.readUInt16BE(16);
  const size = raw === 1 ? 65536 : raw;
  return size >= 512 && (size & (size - 1)) === 0 ? size : undefined;
}

/**
 * The plain bytes of an encrypted database file, CHUNK_PAGES pages at a time, for a key holder's
 * export. A wrong key fails on the first chunk (page 1's check) before anything is yielded. The
 * file must not change meanwhile (the caller holds checkpoints off, as for any export).
 */
export async function* decryptFile(path: string, cipher: PageCipher): AsyncGenerator<Buffer> {
  const file = await open(path, "r");
  try {
    const head = Buffer.alloc(24);
    const { bytesRead } = await file.read(head, 0, 24, 0);
    const pageSize = bytesRead === 24 ? pageSizeOf(head) : undefined;
    if (pageSize === undefined) throw new Error("not an encrypted database file");
    const { size: bytes } = await file.stat();
    const size = bytes - (bytes % pageSize);
    for (let at = 0; at < size; at += CHUNK_PAGES * pageSize) {
      const chunk = Buffer.alloc(Math.min(CHUNK_PAGES * pageSize, size - at));
      await file.read(chunk, 0, chunk.length, at);
      cipher.decryptPages(at / pageSize + 1, chunk, pageSize);
      yield chunk;
    }
  } finally {
    await file.close();
  }
}

/**
 * Writes an encrypted copy of the plain SQLite file `src` to `dest` (created or replaced), a chunk
 * at a time, so the plain bytes never reach `dest`'s disk and memory stays bounded. The result
 * opens with the key's passphrase; its header is otherwise the source's (reserved bytes included).
 */
export async function encryptFile(src: string, dest: string, cipher: PageCipher): Promise<void> {
  const input = await open(src, "r");
  try {
    const head = Buffer.alloc(24);
    const { bytesRead } = await input.read(head, 0, 24, 0);
    const pageSize = bytesRead === 24 ? pageSizeOf(head) : undefined;
    if (head.toString("latin1", 0, 16) !== MAGIC || pageSize === undefined) {
      throw new Error("the file is not a plain SQLite database");
    }
    const size = (await input.stat()).size;
    if (size % pageSize !== 0) throw new Error(`the file is not a whole number of ${pageSize}-byte pages`);
    const output = await open(dest, "w", 0o600);
    try {
      for (let at = 0; at < size; at += CHUNK_PAGES * pageSize) {
        const chunk = Buffer.alloc(Math.min(CHUNK_PAGES * pageSize, size - at));
        await input.read(chunk, 0, chunk.length, at);
        cipher.encryptPages(at / pageSize + 1, chunk, pageSize);
        await output.write(chunk, 0, chunk.length, at);
      }
      await output.sync();
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
}
