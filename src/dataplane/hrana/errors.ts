import {
  ConnectionsExhaustedError,
  damagedMessage,
  isDamaged,
  isSqliteFailure,
  primaryCode,
  ResponseTooLargeError,
  SchemaMovedError,
  SqlInputError,
  StatementCancelledError,
  StatementTimeoutError,
  WalRestartBusyError,
} from "../../engine/sqlite-errors.js";
import { LockTimeoutError } from "../../engine/write-lock.js";
import type { HranaCode } from "./error-codes.js";

/** A failed stream request: reported in its result slot, the stream goes on. */
export class HranaError extends Error {
  constructor(
    readonly code: HranaCode,
    message: string,
  ) {
    super(message);
  }

  toJSON(): { message: string; code: HranaCode } {
    return { message: this.message, code: this.code };
  }
}

/**
 * A request that breaks the protocol itself (malformed JSON, a bad baton, a reused sql_id). Over
 * HTTP it fails the whole request with 400; over WebSocket it closes the socket.
 */
export class ProtocolError extends Error {
  constructor(
    message: string,
    readonly code: HranaCode = "PROTOCOL_ERROR",
  ) {
    super(message);
  }
}

/**
 * The Hrana error of a failure that belongs to the request (a Hrana error, or one of the engine's
 * own refusals: bad SQL input, a limit, a lock wait), wherever it was thrown; undefined for
 * anything else, SQLite's own failures included. The transports' error functions use it too, so
 * such a failure is never answered as the server's.
 */
export function requestFailure(e: unknown): HranaError | undefined {
  if (e instanceof HranaError) return e;
  if (
    e instanceof SqlInputError ||
    e instanceof StatementTimeoutError ||
    e instanceof ResponseTooLargeError ||
    e instanceof StatementCancelledError ||
    e instanceof SchemaMovedError ||
    e instanceof ConnectionsExhaustedError
  )
    return new HranaError(e.code, e.message);
  if (e instanceof LockTimeoutError || e instanceof WalRestartBusyError)
    return new HranaError("SQLITE_BUSY", `SQLite error: ${e.message}`);
  return undefined;
}

/**
 * Turns whatever the engine threw into the error a client sees in a statement's result, with
 * sqld's codes: primary SQLite codes only, `SQL_INPUT_ERROR` for SQL that SQLite refuses to
 * compile, and `SQLITE_UNKNOWN` for SQLite's generic error while running. Anything else is thrown
 * on, to the transport's error function.
 */
export function toHranaError(e: unknown, phase: "prepare" | "run" = "run"): HranaError {
  const own = requestFailure(e);
  if (own) return own;
  if (isDamaged(e)) return new HranaError(primaryCode(e), `SQLite error: ${damagedMessage(e)}`);
  if (isSqliteFailure(e)) {
    const code = primaryCode(e);
    if (code === "SQLITE_ERROR") {
      return phase === "prepare"
        ? new HranaError("SQL_INPUT_ERROR", `SQL input error: ${e.message}`)
        : new HranaError("SQLITE_UNKNOWN", `SQLite error: ${e.message}`);
    }
    return new HranaError(code, `SQLite error: ${e.message}`);
  }
  throw e;
}
