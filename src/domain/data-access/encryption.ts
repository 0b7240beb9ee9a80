import { EncryptionKeyError } from "../../engine/encryption/errors.js";
import type { KeyCache } from "../../engine/encryption/key-cache.js";
import { encryptionOf } from "../../engine/encryption/keys.js";
import { dataAccessErrors } from "./errors.js";
import type { DataAccess } from "./open.js";

/** How the key arrived, for the message telling a client how to send it. */
export type KeyTransport = "http" | "ws";

const HOW: Record<KeyTransport, string> = {
  http: "send its key in the x-turso-encryption-key header (remoteEncryptionKey in @libsql/client)",
  ws: "send its key in the x-turso-encryption-key header of the WebSocket upgrade; @libsql/client's WebSocket transport can't send it, so use an https:// (or http://) URL with remoteEncryptionKey",
};

/**
 * Adds the engine key to a data-plane access: every request to an encrypted database brings its
 * key (`keyText`, the header's base64), verified against the database's check (cached in `keys`).
 * A key sent to a plain database is refused too: accepting it silently would let its owner believe
 * the data is encrypted. Replicas' internal tokens copy stored (encrypted) bytes and need no key.
 */
export function unlockAccess(
  keys: KeyCache,
  access: DataAccess,
  keyText: string | undefined,
  transport: KeyTransport = "http",
  cipherText?: string,
  /** The client's address: wrong keys are limited per database and address. */
  from?: string,
): DataAccess {
  const db = access.database;
  const params = encryptionOf(db);
  if (access.replicaOf !== undefined) return access;
  if (!params) {
    if (keyText === undefined || keyText === "") return access;
    throw dataAccessErrors.notEncrypted(db.name);
  }
  if (keyText === undefined || keyText === "") {
    throw dataAccessErrors.encryptionKeyRequired(db.name, HOW[transport]);
  }
  // The turso CLI's uploads and @tursodatabase/sync name a cipher too: it must be the database's.
  if (cipherText !== undefined && cipherText !== "" && cipherText !== params.cipher) {
    throw dataAccessErrors.cipherMismatch(db.name, cipherText.slice(0, 40), params.cipher);
  }
  try {
    access.key = keys.unlock(db.id, params, keyText, undefined, from ?? "");
  } catch (e) {
    if (e instanceof EncryptionKeyError && e.problem === "invalid") {
      throw dataAccessErrors.encryptionKeyInvalid(db.name);
    }
    throw e;
  }
  return access;
}
