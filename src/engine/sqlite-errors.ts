/** Names of SQLite's primary result codes, by number (the low byte of an extended code). */
const PRIMARY: Record<number, `SQLITE_${string}`> = {
  1: "SQLITE_ERROR",
  2: "SQLITE_INTERNAL",
  3: "SQLITE_PERM",
  4: "SQLITE_ABORT",
  5: "SQLITE_BUSY",
  6: "SQLITE_LOCKED",
  7: "SQLITE_NOMEM",
  8: "SQLITE_READONLY",
  9: "SQLITE_INTERRUPT",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  12: "SQLITE_NOTFOUND",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  15: "SQLITE_PROTOCOL",
  16: "SQLITE_EMPTY",
  17: "SQLITE_SCHEMA",
  18: "SQLITE_TOOBIG",
  19: "SQLITE_CONSTRAINT",
  20: "SQLITE_MISMATCH",
  21: "SQLITE_MISUSE",
  22: "SQLITE_NOLFS",
  23: "SQLITE_AUTH",
  24: "SQLITE_FORMAT",
  25: "SQLITE_RANGE",
  26: "SQLITE_NOTADB",
  27: "SQLITE_NOTICE",
  28: "SQLITE_WARNING",
};

/** An error raised by SQLite itself, as the `libsql` driver reports it. */
export interface SqliteFailure {
  code: string;
  rawCode?: number;
  message: string;
}

export function isSqliteFailure(e: unknown): e is SqliteFailure {
  const code = (e as { code?: unknown } | null)?.code;
  return e instanceof Error && typeof code === "string" && code.startsWith("SQLITE_");
}

/**
 * The primary code of a SQLite error (`SQLITE_CONSTRAINT` for `SQLITE_CONSTRAINT_UNIQUE`): clients
 * test against primary codes, as sqld reports them.
 */
export function primaryCode(e: SqliteFailure): `SQLITE_${string}` {
  if (e.rawCode !== undefined) return PRIMARY[e.rawCode & 0xff] ?? "SQLITE_UNKNOWN";
  const known = Object.values(PRIMARY)
    .filter((name) => e.code === name || e.code.startsWith(`${name}_`))
    .sort((a, b) => b.length - a.length);
  return known[0] ?? "SQLITE_UNKNOWN";
}

/** Errors about the SQL text or its arguments, found before SQLite runs it. */
export class SqlInputError extends Error {
  constructor(
    readonly code:
      | "SQL_NO_STATEMENT"
      | "SQL_MANY_STATEMENTS"
      | "ARGS_INVALID"
      | "ARGS_BOTH_POSITIONAL_AND_NAMED"
      | "SQL_PARSE_ERROR",
    message: string,
  ) {
    super(message);
  }
}

/** SQLite found a database file damaged (SQLITE_CORRUPT) or not a database at all (SQLITE_NOTADB). */
export function isDamaged(e: unknown): e is SqliteFailure {
  if (!isSqliteFailure(e)) return false;
  const code = primaryCode(e);
  return code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB";
}

/** What a client is told about a damaged database, and how to get its data back. */
export function damagedMessage(e: SqliteFailure): string {
  return (
    `the database file is damaged (${e.message}); create a database from it as it was before the ` +
    "damage (seed type database with a timestamp) or restore a copy"
  );
}

/**
 * A database file that isn't there. The driver ignores `fileMustExist` and would create an empty
 * database in its place, hiding the loss; this stands for SQLite's own SQLITE_CANTOPEN instead.
 */
export class MissingFileError extends Error {
  readonly code = "SQLITE_CANTOPEN";
  readonly rawCode = 14;

  constructor() {
    super("unable to open database file: it is missing on the server");
  }
}

/** A statement ran past the statement time limit and SQLite interrupted it. */
export class StatementTimeoutError extends Error {
  readonly code = "STATEMENT_TIMEOUT";

  constructor(limitMs: number, rolledBack: boolean) {
    super(
      `the statement ran longer than ${limitMs} ms, the server's limit (SHOAL_STATEMENT_TIMEOUT_MS), ` +
        `and was interrupted${rolledBack ? "; its transaction was rolled back" : ""}`,
    );
  }
}

/** A statement's result would make the response larger than allowed; nothing more is read. */
export class ResponseTooLargeError extends Error {
  readonly code = "RESPONSE_TOO_LARGE";
}

/** SQLite's out-of-memory code, which the heap limit turns a huge value into. */
export function isOutOfMemory(e: unknown): boolean {
  return isSqliteFailure(e) && primaryCode(e) === "SQLITE_NOMEM";
}

/** SQLite's interrupt code: the statement was stopped by `interrupt()`. */
export function isInterrupt(e: unknown): boolean {
  return isSqliteFailure(e) && primaryCode(e) === "SQLITE_INTERRUPT";
}

/** A read whose schema changed before it ran (see ExecOptions.checkedProgram): nothing it read is answered. */
export class SchemaMovedError extends Error {
  readonly code = "SQLITE_SCHEMA";

  constructor() {
    super("the database schema changed while the statement waited to run; run it again");
  }
}

/** A statement stopped because its stream closed (the client went away) while it ran. */
export class StatementCancelledError extends Error {
  readonly code = "STATEMENT_CANCELLED";

  constructor() {
    super("the statement was stopped: its stream closed while it ran");
  }
}

/**
 * Every connection the server may open is in use: the request would need one more. Idle
 * connections were closed first; this is what remains when all of them are busy.
 */
export class ConnectionsExhaustedError extends Error {
  readonly code = "CONNECTIONS_EXHAUSTED";

  constructor(limit: number) {
    super(
      `the server has ${limit} database connections open, all in use, the most its file descriptors ` +
        "allow (SHOAL_MAX_CONNECTIONS and the process's open-file limit): retry in a moment",
    );
  }
}

/**
 * A database's WAL still held the cycle its last generation ended in, and the checkpoint that
 * empties it before a process's first use (see retired-cycle.ts) couldn't complete: another
 * process was reading it. SQLite's own busy code, as a write waiting on a lock would give.
 */
export class WalRestartBusyError extends Error {
  readonly code = "SQLITE_BUSY";
  readonly rawCode = 5;

  constructor() {
    super("database is locked: another process is reading it while it reopens; retry in a moment");
  }
}
