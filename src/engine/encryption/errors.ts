import { AppError, InvalidError } from "../../errors.js";

/**
 * Why a key didn't open a database. Each has its own code, so a client (and the data plane's
 * error mapping) can tell "send a key" from "that key is wrong" from "that isn't a key at all".
 * Messages never carry the key, nor anything derived from it.
 */
export type KeyProblem = "required" | "invalid" | "malformed" | "not-encrypted" | "attempts";

const KIND = {
  // No key at all: like a missing credential.
  required: "unauthenticated",
  // A well-formed key that doesn't open the database: like a credential without the right.
  invalid: "forbidden",
  malformed: "invalid",
  "not-encrypted": "invalid",
  // Too many wrong keys from one address: like any rate limit.
  attempts: "limit_exceeded",
} as const;

const CODE = {
  required: "ENCRYPTION_KEY_REQUIRED",
  invalid: "ENCRYPTION_KEY_INVALID",
  malformed: "ENCRYPTION_KEY_MALFORMED",
  "not-encrypted": "DATABASE_NOT_ENCRYPTED",
  attempts: "ENCRYPTION_KEY_ATTEMPTS",
} as const;

const DEFAULT_MESSAGE: Record<KeyProblem, string> = {
  required: "the database is encrypted and no encryption key was given",
  invalid: "the encryption key doesn't open the database",
  malformed: "the encryption key is not valid",
  "not-encrypted": "the database is not encrypted; send no encryption key",
  attempts: "too many wrong encryption keys for this database from this address",
};

export class EncryptionKeyError extends AppError {
  constructor(
    readonly problem: KeyProblem,
    message = DEFAULT_MESSAGE[problem],
  ) {
    super(KIND[problem], message, CODE[problem]);
  }
}

/** A cipher name Shoal can't honour, or `remote_encryption` given without one. */
export class UnsupportedCipherError extends InvalidError {
  constructor(message: string) {
    super(message, "ENCRYPTION_CIPHER_UNSUPPORTED");
  }
}
