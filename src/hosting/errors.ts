import { ConflictError, InvalidError, NotFoundError, UnavailableError } from "../errors.js";

/**
 * Every error message the hosting services (seeding a database, installing an upload) answers with. The texts are the API's contract (Turso's wording
 * where Turso has one; clients and tests match on them): change one only on purpose.
 */
export const hostingErrors = {
  /** A check of the uploaded file failed; `reason` says which. */
  invalidDatabaseFile: (reason: string) => new InvalidError(reason, "INVALID_DATABASE_FILE"),
  uploadInstalling: (name: string) =>
    new ConflictError(`an upload of database ${name} is already being installed`, "UPLOAD_BUSY"),
  uploadDone: (name: string) =>
    new ConflictError(`database ${name} already received its upload`, "DATABASE_NOT_AWAITING_UPLOAD"),
  uploadTooLarge: (bytes: number, maxBytes: number) =>
    new InvalidError(
      `the database file is ${bytes} bytes, more than the ${maxBytes} allowed (the database's size limit)`,
      "INVALID_DATABASE_FILE",
    ),
  notSqlite: (reason: string) =>
    new InvalidError(`the file is not a valid SQLite database: ${reason}`, "INVALID_DATABASE_FILE"),
  uploadBusy: (name: string) =>
    new UnavailableError(`database ${name} is busy; retry the upload`, "UPLOAD_BUSY"),
  uncopyable: (name: string, reason: string) =>
    new ConflictError(`database ${name} can't be copied: ${reason}`),
  restoredDamaged: (reason: string) => new InvalidError(`the restored database is damaged: ${reason}`),
  restoreInFuture: (at: string, now: string) =>
    new InvalidError(`seed.timestamp ${at} is in the future (the server's time is ${now})`),
  restoreBeforeHistory: (at: string, name: string, earliest: string) =>
    new InvalidError(
      `seed.timestamp ${at} is older than the history of database ${name}: it goes back to ${earliest}`,
    ),
  dumpUsedUp: () =>
    new InvalidError(
      "seed.url names a dump that doesn't exist any more: it was used or expired; upload it again",
    ),
  dumpFailed: (reason: string) => new InvalidError(`the dump could not be loaded: ${reason}`),
  seedTooLarge: (bytes: number, maxBytes: number) =>
    new InvalidError(
      `the seed makes a database of ${bytes} bytes, more than its size_limit of ${maxBytes} bytes`,
    ),
  sourceDeleted: (name: string) =>
    new NotFoundError(`could not find database with name ${name}: it was deleted while being copied`),
};
