import {
  ConnectionsExhaustedError,
  damagedMessage,
  isDamaged,
  isSqliteFailure,
  primaryCode,
  ResponseTooLargeError,
  SqlInputError,
  StatementCancelledError,
  StatementTimeoutError,
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
 * Turns whatever the engine threw into the error a client sees, with sqld's codes: primary SQLite
 * codes only, `SQL_INPUT_ERROR` for SQL that SQLite refuses to compile, and `SQLITE_UNKNOWN` for
 * SQLite's generic error while running.
 */
export function toHranaError(e: unknown, phase: "prepare" | "run" = "run"): HranaError {
  if (e instanceof HranaError) return e;
  if (
    e instanceof SqlInputError ||
    e instanceof StatementTimeoutError ||
    e instanceof ResponseTooLargeError ||
    e instanceof StatementCancelledError ||
    e instanceof ConnectionsExhaustedError
  )
    return new HranaError(e.code, e.message);
  if (e instanceof LockTimeoutError) return new HranaError("SQLITE_BUSY", `SQLite error: ${e.message}`);
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
