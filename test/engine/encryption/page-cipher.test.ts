import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EncryptionKeyError } from "../../../src/engine/encryption/errors.js";
import {
  CHUNK_PAGES,
  decryptFile,
  encryptFile,
  fileState,
} from "../../../src/engine/encryption/file-cipher.js";
import { type DatabaseKey, newEncryption } from "../../../src/engine/encryption/keys.js";
import { keyOptions, openDatabase } from "../../../src/engine/encryption/open.js";
import { PageCipher, pageCipherFor } from "../../../src/engine/encryption/page-cipher.js";
import { FRAME_BYTES, PAGE_SIZE, readWalFrames } from "../../../src/engine/wal.js";
import { filesHoldingText } from "../../helpers/plaintext.js";

let dir: string;
let key: DatabaseKey;
const MARKER = `secret-${randomBytes(8).toString("hex")}`;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-cipher-"));
  key = newEncryption({ cipher: "aes256cbc", key: randomBytes(32) }).key;
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A database written by the engine: a table and an index over ~`rows` rows, checkpointed. */
function engineDatabase(file: string, k: DatabaseKey | undefined, rows = 1500): void {
  const db = new Database(file, keyOptions(k));
  db.exec(
    "PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX tv ON t(v)",
  );
  const ins = db.prepare("INSERT INTO t (v) VALUES (?)");
  db.exec("BEGIN");
  for (let i = 0; i < rows; i++) ins.run(`${MARKER}-${i}-${"x".repeat(200 + (i % 400))}`);
  db.exec("COMMIT");
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

const rowsOf = (db: Database.Database) => db.prepare("SELECT id, v FROM t ORDER BY id").raw(true).all();
const integrity = (db: Database.Database) =>
  (db.prepare("PRAGMA integrity_check").raw(true).get() as string[])[0];

describe("the page cipher, against the engine", () => {
  it("decrypts an engine-encrypted file into the same database in plain, and re-encrypts it to the engine's exact bytes", async () => {
    const enc = path.join(dir, "enc.db");
    engineDatabase(enc, key);
    expect(fileState(enc)).toBe("encrypted");
    expect(filesHoldingText(enc, MARKER)).toEqual([]);
    const encrypted = readFileSync(enc);
    expect(encrypted.length / PAGE_SIZE).toBeGreaterThan(CHUNK_PAGES); // several chunks

    const chunks: Buffer[] = [];
    for await (const chunk of decryptFile(enc, pageCipherFor(key))) {
      expect(chunk.length).toBeLessThanOrEqual(CHUNK_PAGES * PAGE_SIZE);
      chunks.push(chunk);
    }
    const plainFile = path.join(dir, "plain.db");
    writeFileSync(plainFile, Buffer.concat(chunks));
    expect(fileState(plainFile)).toBe("plain");
    const plain = new Database(plainFile);
    const withKey = openDatabase(enc, key);
    expect(rowsOf(plain)).toEqual(rowsOf(withKey));
    expect(rowsOf(plain)).toHaveLength(1500);
    expect(integrity(plain)).toBe("ok");
    plain.close();
    withKey.close();

    const again = path.join(dir, "again.db");
    await encryptFile(plainFile, again, pageCipherFor(key));
    expect(readFileSync(again).equals(encrypted)).toBe(true);
  });

  it("encrypts a plain file that the engine then opens, reads, writes and checkpoints with the key", async () => {
    const plainFile = path.join(dir, "upload.db");
    engineDatabase(plainFile, undefined, 800);
    const dest = path.join(dir, "seeded.db");
    await encryptFile(plainFile, dest, pageCipherFor(key));
    expect(filesHoldingText(dest, MARKER)).toEqual([]);
    expect(fileState(dest)).toBe("encrypted");

    const db = openDatabase(dest, key);
    expect(rowsOf(db)).toHaveLength(800);
    db.exec("INSERT INTO t (v) VALUES ('later')");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    expect(integrity(db)).toBe("ok");
    db.close();
    expect(filesHoldingText(dest, MARKER)).toEqual([]);
    expect(() => openDatabase(dest)).toThrow(EncryptionKeyError);
  });

  it("decrypts WAL frames the engine wrote into the pages a checkpoint then writes in clear", () => {
    const enc = path.join(dir, "enc.db");
    engineDatabase(enc, key, 10);
    const db = new Database(enc, keyOptions(key));
    db.exec("PRAGMA wal_autocheckpoint = 0");
    db.exec(`INSERT INTO t (v) VALUES ('${MARKER}-wal')`);
    const frames = readWalFrames(`${enc}-wal`, 1, 1000);
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.includes(MARKER)).toBe(false);
    const plainFrames = Buffer.from(frames);
    pageCipherFor(key).decryptFrames(plainFrames, PAGE_SIZE);
    expect(plainFrames.includes(`${MARKER}-wal`)).toBe(true);
    // Frame headers (and their checksums over the ciphertext) are unchanged.
    for (let at = 0; at < frames.length; at += FRAME_BYTES) {
      expect(plainFrames.subarray(at, at + 24).equals(frames.subarray(at, at + 24))).toBe(true);
    }
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    const file = readFileSync(enc);
    const cipher = pageCipherFor(key);
    for (let at = 0; at < frames.length; at += FRAME_BYTES) {
      const page = frames.readUInt32BE(at);
      // The last frame of each page is what the checkpoint wrote: it decrypts the same.
      const later = frames.subarray(at + FRAME_BYTES).length / FRAME_BYTES;
      const rewritten = [...Array(later).keys()].some(
        (i) => frames.readUInt32BE(at + (i + 1) * FRAME_BYTES) === page,
      );
      if (rewritten) continue;
      const stored = file.subarray((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
      expect(cipher.decrypt(page, stored)!.equals(plainFrames.subarray(at + 24, at + FRAME_BYTES))).toBe(
        true,
      );
    }
  });

  it("refuses a wrong key at page 1, before yielding anything", async () => {
    const enc = path.join(dir, "enc.db");
    engineDatabase(enc, key, 10);
    const wrong = PageCipher.fromPassphrase("another-passphrase-of-32-chars!!");
    expect(wrong.decrypt(1, readFileSync(enc).subarray(0, PAGE_SIZE))).toBeUndefined();
    const yielded: Buffer[] = [];
    await expect(async () => {
      for await (const c of decryptFile(enc, wrong)) yielded.push(c);
    }).rejects.toThrow(EncryptionKeyError);
    expect(yielded).toEqual([]);
  });

  it("refuses to encrypt what isn't a plain SQLite file", async () => {
    const enc = path.join(dir, "enc.db");
    engineDatabase(enc, key, 10);
    await expect(encryptFile(enc, path.join(dir, "x.db"), pageCipherFor(key))).rejects.toThrow(
      "the file is not a plain SQLite database",
    );
    const plainCut = path.join(dir, "plaincut.db");
    engineDatabase(plainCut, undefined, 10);
    writeFileSync(plainCut, readFileSync(plainCut).subarray(0, PAGE_SIZE + 100));
    await expect(encryptFile(plainCut, path.join(dir, "y.db"), pageCipherFor(key))).rejects.toThrow(
      "not a whole number of 4096-byte pages",
    );
  });
});
