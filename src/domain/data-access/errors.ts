import { EncryptionKeyError } from "../../engine/encryption/errors.js";
import {
  ConflictError,
  ForbiddenError,
  InvalidError,
  MisdirectedError,
  NotFoundError,
  UnauthenticatedError,
} from "../../errors.js";

const MINT_DB_TOKEN =
  "mint a database token with POST /v1/organizations/{org}/databases/{db}/auth/tokens " +
  "(turso db tokens create <db>)";

/**
 * Every error message the data-access area (database tokens, and access through the data plane) answers with. The texts are the API's contract (Turso's wording
 * where Turso has one; clients and tests match on them): change one only on purpose.
 */
export const dataAccessErrors = {
  encryptionKeyRequired: (name: string, how: string) =>
    new EncryptionKeyError("required", `database ${name} is encrypted: ${how}`),
  encryptionKeyInvalid: (name: string) =>
    new EncryptionKeyError("invalid", `the encryption key doesn't open database ${name}`),
  notEncrypted: (name: string) =>
    new EncryptionKeyError(
      "not-encrypted",
      `database ${name} is not encrypted: send no x-turso-encryption-key header`,
    ),
  cipherMismatch: (name: string, sent: string, cipher: string) =>
    new InvalidError(
      `x-turso-encryption-cipher ${JSON.stringify(sent)} is not the cipher of database ${name}, which is ${cipher}`,
      "ENCRYPTION_CIPHER_UNSUPPORTED",
    ),
  encryptedPullUnsupported: (name: string) =>
    new InvalidError(
      `database ${name} is encrypted, and pulls of encrypted databases through the Turso sync protocol (@tursodatabase/sync) are not supported: use @libsql/client over https with remoteEncryptionKey`,
      "ENCRYPTION_NOT_SUPPORTED",
    ),
  awaitingUpload: (name: string) =>
    new ConflictError(
      `database ${name} has no content yet: it was created for an upload (seed type database_upload), so upload a SQLite file to https://<database hostname>/v1/upload first`,
      "DATABASE_AWAITING_UPLOAD",
    ),
  apiTokenOnData: () =>
    new UnauthenticatedError(
      `the token is an API token, which manages the service but opens no database: ${MINT_DB_TOKEN}`,
      "AUTH_JWT_INVALID",
    ),
  notADatabaseToken: () =>
    new UnauthenticatedError(`the token is not a valid database token: ${MINT_DB_TOKEN}`, "AUTH_JWT_INVALID"),
  databaseWritesBlocked: (name: string) =>
    new ForbiddenError(
      `writes to database ${name} are blocked (block_writes): an upload is a write`,
      "BLOCKED",
    ),
  organizationWritesBlocked: (slug: string) =>
    new ForbiddenError(
      `writes of organization ${slug} are blocked because it used up its plan's quota: an upload is a write`,
      "BLOCKED",
    ),
  expired: () => new UnauthenticatedError("the token has expired", "AUTH_JWT_EXPIRED"),
  providerRefused: (why: string) =>
    new UnauthenticatedError(
      `the token is neither a database token of this Shoal nor one an identity provider the organization trusts signed: ${why}`,
      "AUTH_JWT_INVALID",
    ),
  providerUnscoped: () =>
    new UnauthenticatedError(
      "the identity provider's token names no database (claim id) or group (claim gid); a token naming neither is accepted only from a key set saved with an audience",
      "AUTH_JWT_INVALID",
    ),
  providerAccess: (a: string) =>
    new UnauthenticatedError(
      `the token's claim a is ${JSON.stringify(a)}: use rw (the default) or ro`,
      "AUTH_JWT_INVALID",
    ),
  revokeWhat: () => new InvalidError('send the token to revoke as "token"'),
  foreignToken: () => new InvalidError("token is not a database or group token issued by this Shoal"),
  tokenOfOther: (what: string) => new InvalidError(`token is not a token of ${what}`),
  /** Turso's wording first (clients match on it), then what would have been accepted. */
  invalidExpiration: (text: string) =>
    new InvalidError(
      `Invalid expiration format: ${JSON.stringify(text)}; use never, or a duration of whole numbers ` +
        "with units w, d, h, m, s, ms, us or ns, such as 2w, 1d, 12h, 30m or 1h30m " +
        "(there is no unit for months or years: use 4w or 52w)",
    ),
  expiresAtOnce: () => new InvalidError("Invalid expiration format: the token would expire at once"),
  invalidAuthorization: () => new InvalidError("authorization must be full-access or read-only"),
  attachUnknown: (name: string) =>
    new InvalidError(`cannot grant ATTACH to ${name}: no such database in this organization`),
  noDatabase: () => new NotFoundError("database not found", "DATABASE_NOT_FOUND"),
  missingToken: () =>
    new UnauthenticatedError(
      "missing Authorization header with a Bearer database token",
      "AUTH_HEADER_NOT_FOUND",
    ),
  rotated: () =>
    new UnauthenticatedError("the token was revoked by a credential rotation", "AUTH_JWT_REVOKED"),
  unscoped: () =>
    new UnauthenticatedError("the token is not scoped to a database or group", "AUTH_JWT_INVALID"),
  revoked: () => new UnauthenticatedError("the token was revoked", "AUTH_JWT_REVOKED"),
  ipNotAllowed: (name: string, peer: string | undefined) =>
    new ForbiddenError(
      `database ${name} only serves the addresses in its allowed_ips, and ${peer ?? "this client"} is not one of them`,
      "IP_NOT_ALLOWED",
    ),
  servedElsewhere: (name: string, location: string) =>
    new MisdirectedError(
      `database ${name} is served by the node holding location ${location}, not by this one: send its requests there`,
      "DATABASE_ELSEWHERE",
    ),
  ownerDeleted: (what: string) =>
    new UnauthenticatedError(`the token belongs to a ${what} that was deleted`, "AUTH_DATABASE_DELETED"),
  otherDatabase: () => new ForbiddenError("the token belongs to another database", "AUTH_DATABASE_MISMATCH"),
  replicationOnly: () => new ForbiddenError("a replication token only syncs", "AUTH_REPLICATION_ONLY"),
  uploadNeedsFullAccess: () =>
    new ForbiddenError(
      "Authorization forbidden: uploading a database needs a full-access token",
      "FORBIDDEN",
    ),
  notAwaitingUpload: (name: string) =>
    new ConflictError(
      `database ${name} doesn't wait for an upload: only a database created with seed {"type": "database_upload"} receives one, once`,
      "DATABASE_NOT_AWAITING_UPLOAD",
    ),
};

/** What managing an organization's trusted key sets (`jwks.ts`) answers when it refuses. */
export const jwksErrors = {
  badName: (name: string) =>
    new InvalidError(
      `invalid key set name ${JSON.stringify(name)}: 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit`,
    ),
  noUrl: () => new InvalidError('send the key set\'s URL as "jwks_url"'),
  unusable: (why: string) => new InvalidError(`the key set can't be trusted: ${why}`),
  tooMany: (max: number) =>
    new ConflictError(`the organization already trusts ${max} key sets: remove one before saving another`),
  notFound: (name: string) => new NotFoundError(`no key set named ${name}`),
  templateScope: () =>
    new InvalidError("name either a database or a group (not both) for the template's claims"),
  templateAccess: (scope: string) =>
    new InvalidError(`scope must be full-access or read-only, not ${JSON.stringify(scope)}`),
};

/** What fine-grained (table-level) permissions answer when rules are malformed (table-permissions.ts). */
export const tablePermissionErrors = {
  notList: (where: string) =>
    new InvalidError(`${where} must be a list of rules such as [{"t": ["comments"], "a": ["data_read"]}]`),
  tooMany: (where: string, max: number) => new InvalidError(`${where} has more than ${max} rules`),
  notRule: (where: string) =>
    new InvalidError(`${where} must be an object {"t": [tables], "a": [actions]} (no tables: every table)`),
  badTables: (where: string) =>
    new InvalidError(`${where}.t must be a list of table names (an empty list or null: every table)`),
  tooManyTables: (where: string, max: number) => new InvalidError(`${where}.t names more than ${max} tables`),
  noActions: (where: string) => new InvalidError(`${where}.a must list at least one action`),
  unknownAction: (where: string, action: string, known: readonly string[]) =>
    new InvalidError(
      `${where}.a has unknown action ${JSON.stringify(action)}: use ${known.join(", ")}` +
        (action === "data_insert" ? " (data_add inserts rows)" : ""),
    ),
  badClaim: (why: string) =>
    new UnauthenticatedError(
      `the token's fine-grained permissions (claim perm) are malformed: ${why}`,
      "AUTH_JWT_INVALID",
    ),
  rawFileRefused: () =>
    new ForbiddenError(
      "Authorization forbidden: the token has table-level permissions, and this route hands out the whole database file; use SQL over /v2/pipeline",
      "FORBIDDEN",
    ),
};
