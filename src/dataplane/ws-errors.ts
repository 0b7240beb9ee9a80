import { damagedMessage, isDamaged, primaryCode } from "../engine/sqlite-errors.js";
import { AppError } from "../errors.js";
import { type HranaCode, passedOn } from "./hrana/error-codes.js";
import { ProtocolError, requestFailure } from "./hrana/errors.js";

/** WebSocket close codes: 1002 protocol error, 1008 policy (authentication). */
export const CLOSE_PROTOCOL = 1002;
export const CLOSE_POLICY = 1008;

export interface WsErrorBody {
  message: string;
  code: HranaCode;
}

/** How a failure on a Hrana WebSocket is answered. */
export interface WsErrorAnswer {
  /**
   * The error of one request (a `response_error`, or the `hello_error`), when the failure is that
   * request's own and the connection goes on. Absent: the connection must close.
   */
  error?: WsErrorBody;
  /** The close, when the connection ends: always given, for failures outside any one request. */
  close: { code: number; reason: string };
  /** A failure of the server's own: its cause goes to the log, the client gets only the request id. */
  internal: boolean;
}

/**
 * The one place a failure on a Hrana WebSocket becomes what the client gets. A request's own
 * failure (a Hrana error, a domain refusal such as a revoked token, a damaged file) is answered in
 * `response_error` and the connection goes on; a broken protocol closes it with 1002 and the
 * reason; anything else closes it naming only the request id. `hello`: every failure is a
 * `hello_error` followed by a 1008 close.
 */
export function wsErrorOf(
  e: unknown,
  requestId: string,
  phase: "hello" | "request" = "request",
): WsErrorAnswer {
  const internal = { message: `internal error (request ${requestId})`, code: "INTERNAL_ERROR" as const };
  if (phase === "hello") {
    const known = e instanceof AppError;
    const error = known ? { message: e.message, code: codeOf(e, "AUTH_FAILED") } : internal;
    return { error, close: { code: CLOSE_POLICY, reason: "authentication failed" }, internal: !known };
  }
  const error = requestError(e);
  // A client's mistake is told why; a failure of the server's only its request id.
  const clientFault = error !== undefined || e instanceof ProtocolError || e instanceof SyntaxError;
  const reason = clientFault ? (e as Error).message : internal.message;
  return { error, close: { code: CLOSE_PROTOCOL, reason: reason.slice(0, 120) }, internal: !clientFault };
}

function requestError(e: unknown): WsErrorBody | undefined {
  const failure = requestFailure(e);
  if (failure) return failure.toJSON();
  if (e instanceof AppError) return { message: e.message, code: codeOf(e, "ERROR") };
  if (isDamaged(e)) return { message: damagedMessage(e), code: primaryCode(e) };
  return undefined;
}

function codeOf(e: AppError, fallback: "AUTH_FAILED" | "ERROR"): HranaCode {
  return e.code === undefined ? fallback : passedOn(e.code);
}
