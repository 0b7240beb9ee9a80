import { EncryptionKeyError } from "../../engine/encryption/errors.js";
import { parseRemoteEncryption } from "../../engine/encryption/key-input.js";
import {
  type DatabaseKey,
  type EncryptionParams,
  encryptionOf,
  newEncryption,
  unlockDatabase,
} from "../../engine/encryption/keys.js";
import type { DatabaseWithPlacement } from "../../store/databases.js";
import { databaseErrors } from "./errors.js";

/** How a new database is encrypted: its parameters (kept), and the key to build it with (never kept). */
export interface EncryptionPlan {
  params: EncryptionParams;
  key: DatabaseKey;
  /**
   * The new database's pages come from a plain source (a branch or restore of a plain database,
   * asked for encrypted): they are encrypted as they are copied.
   */
  fromPlain: boolean;
}

/** What a create asks for besides `remote_encryption`. */
export interface EncryptionRequest {
  remoteEncryption: unknown;
  /** The database a `database` seed copies. */
  source?: DatabaseWithPlacement;
  isSchema?: boolean;
  schema?: string;
}

/**
 * Reads `remote_encryption` of a create against what the new database is built from. A branch or
 * point-in-time restore of an encrypted database copies its encrypted pages, so it keeps the
 * source's cipher, salt and check, and must bring the source's key; one of a plain database may
 * ask for encryption (its pages are encrypted as they are copied). Schema databases and their
 * followers can't be encrypted: their DDL is journaled and replayed in plain text.
 */
export function planEncryption(req: EncryptionRequest): EncryptionPlan | undefined {
  const raw = req.remoteEncryption;
  const asked = raw !== undefined && raw !== null;
  const sourceParams = req.source ? encryptionOf(req.source) : undefined;
  if (!asked) {
    if (sourceParams && req.source) throw databaseErrors.sourceEncrypted(req.source.name);
    return undefined;
  }
  if (typeof raw !== "object" || Array.isArray(raw)) throw databaseErrors.encryptionNotObject();
  if (req.isSchema || req.schema) throw databaseErrors.encryptionWithSchema();
  // Keys of the body were lower-cased on the way in; the fields are lower-case anyway.
  const input = parseRemoteEncryption(raw, sourceParams?.cipher);
  if (sourceParams && req.source) {
    try {
      return { params: sourceParams, key: unlockDatabase(sourceParams, input.key), fromPlain: false };
    } catch (e) {
      if (e instanceof EncryptionKeyError) throw databaseErrors.sourceKeyWrong(req.source.name);
      throw e;
    }
  }
  const { params, key } = newEncryption(input);
  return { params, key, fromPlain: req.source !== undefined };
}
