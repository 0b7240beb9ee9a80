import type { IncomingMessage, ServerResponse } from "node:http";
import { damagedMessage, isDamaged, primaryCode } from "../engine/sqlite-errors.js";
import { AppError } from "../errors.js";
import { STATUS_OF_KIND } from "../lib/error-status.js";
import { loggablePath } from "../lib/loggable-path.js";
import type { Logger } from "../lib/logger.js";
import { type HranaCode, isShoalCode, passedOn, type ShoalCode } from "./hrana/error-codes.js";
import { ProtocolError, requestFailure } from "./hrana/errors.js";
import { BodyTimeoutError, BodyTooLargeError, sendError } from "./http-io.js";

/** A data-plane URL that names no route, or names one wrongly. */
export class NoRouteError extends Error {
  constructor(
    readonly code: Extract<ShoalCode, "NOT_FOUND" | "URL_MISSING_TRAILING_SLASH">,
    message: string,
  ) {
    super(message);
  }
}

/** How a failed data-plane HTTP request is answered: sent by `sendError` as `{error, message, code}`. */
export interface HttpErrorAnswer {
  status: number;
  code: HranaCode;
  message: string;
  /** The connection can't be trusted to be at a request boundary any more: close it after. */
  closeConnection: boolean;
  /** A failure of the server's own: its cause goes to the log, the client gets only the request id. */
  internal: boolean;
}

/** Hrana errors that fail a whole HTTP request rather than one result, by code; any other is 400. */
const STATUS_OF_CODE: Partial<Record<ShoalCode, number>> = {
  STREAMS_TOO_MANY: 429,
  // Every connection busy: the request was fine, retry in a moment.
  CONNECTIONS_EXHAUSTED: 503,
  DISK_RESERVE_REACHED: 507,
};

/**
 * The one place a failed data-plane HTTP request becomes a status, code and message (per-statement
 * failures are results of the pipeline instead: see `toHranaError`). Anything not known here is a
 * failure of the server's: 500 `INTERNAL_ERROR` naming the request id.
 */
export function httpErrorOf(e: unknown, requestId: string): HttpErrorAnswer {
  const answer = (status: number, code: HranaCode, message: string, closeConnection = false) => ({
    status,
    code,
    message,
    closeConnection,
    internal: false,
  });
  if (e instanceof BodyTooLargeError) return answer(413, "REQUEST_TOO_LARGE", e.message, true);
  if (e instanceof BodyTimeoutError) return answer(408, "REQUEST_TIMEOUT", e.message, true);
  if (e instanceof AppError)
    return answer(STATUS_OF_KIND[e.kind], e.code === undefined ? "ERROR" : passedOn(e.code), e.message);
  if (e instanceof ProtocolError) return answer(400, e.code, e.message);
  if (e instanceof NoRouteError) return answer(404, e.code, e.message);
  const failure = requestFailure(e);
  if (failure) {
    const status = isShoalCode(failure.code) ? STATUS_OF_CODE[failure.code] : undefined;
    return answer(status ?? 400, failure.code, failure.message);
  }
  // The database's own file is damaged: the request is fine, the database can't serve it.
  if (isDamaged(e)) return answer(409, primaryCode(e), damagedMessage(e));
  return {
    status: 500,
    code: "INTERNAL_ERROR",
    message: `internal error (request ${requestId})`,
    closeConnection: false,
    internal: true,
  };
}

/**
 * Answers a data-plane request that failed with `e`, wherever it was served: a failure of the
 * server's own goes to the log under the request id, the client gets the mapped answer.
 */
export function answerFailure(
  req: IncomingMessage,
  res: ServerResponse,
  e: unknown,
  requestId: string,
  log: Logger,
): void {
  // Sent too late, or to a client that hung up before its request was whole (node's "aborted"):
  // there is no one left to answer, and nothing went wrong here.
  if (res.headersSent || (req.destroyed && (e as NodeJS.ErrnoException).code === "ECONNRESET")) {
    res.destroy();
    return;
  }
  const answer = httpErrorOf(e, requestId);
  if (answer.internal) {
    const path = loggablePath((req.url ?? "/").split("?")[0]!);
    log.child({ requestId }).error({ err: e, method: req.method, path }, "data plane request failed");
  }
  if (answer.closeConnection) res.setHeader("connection", "close");
  sendError(res, answer.status, answer.code, answer.message);
}
