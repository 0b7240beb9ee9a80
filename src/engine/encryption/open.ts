import Database from "libsql";
import { isSqliteFailure, primaryCode } from "../sqlite-errors.js";
import { EncryptionKeyError } from "./errors.js";
import { fileState } from "./file-cipher.js";
import type { DatabaseKey } from "./keys.js";

/**
 * Opens a database file with the engine, with `key` when it is encrypted, and reads its header
 * once: the engine only notices a missing or wrong key at the first read, as SQLITE_NOTADB "file
 * is not a database", the same error as a damaged file. Here that error becomes an
 * `EncryptionKeyError` whenever the file's header shows whether it is encrypted:
 * - encrypted, no key: "required";
 * - encrypted, a key that doesn't open it: "invalid";
 * - plain, a key given: "not-encrypted" (opening it "encrypted" would silently mislead).
 * A file that is neither stays the engine's own error (damaged), as without encryption.
 */
export function openDatabase(path: string, key?: DatabaseKey): Database.Database {
  const db = new Database(path, keyOptions(key));
  try {
    db.prepare("PRAGMA schema_version").raw(true).get();
    return db;
  } catch (e) {
    db.close();
    throw keyFailure(e, path, key !== undefined) ?? e;
  }
}

/**
 * The engine's open options for `key` (none for a plain database). The driver's type declarations
 * omit these options, which its constructor reads.
 */
export function keyOptions(key: DatabaseKey | undefined): Database.Options {
  if (!key) return {};
  return { encryptionKey: key.passphrase, encryptionCipher: key.cipher } as Database.Options;
}

/**
 * The `EncryptionKeyError` an engine failure on `path` stands for, if it stands for one: for
 * callers that open files their own way (the connection pool) and meet SQLITE_NOTADB later.
 */
export function keyFailure(e: unknown, path: string, keyed: boolean): EncryptionKeyError | undefined {
  if (!isSqliteFailure(e) || primaryCode(e) !== "SQLITE_NOTADB") return undefined;
  const state = fileState(path);
  if (state === "encrypted") return new EncryptionKeyError(keyed ? "invalid" : "required");
  if (state === "plain" && keyed) return new EncryptionKeyError("not-encrypted");
  return undefined;
}

/**
 * A connection for reads only on a replica a keyless follower keeps (replication/): it must
 * never write, or the follower's pages and the reader's WAL would diverge. Close it before the
 * follower applies frames: an open connection keeps serving the pages it cached.
 */
export function openReplicaReader(path: string, key: DatabaseKey | undefined): Database.Database {
  const db = openDatabase(path, key);
  db.exec("PRAGMA query_only = 1");
  return db;
}
