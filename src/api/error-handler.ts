import type { Context } from "hono";
import { AppError } from "../errors.js";
import { STATUS_OF_KIND } from "../lib/error-status.js";
import { loggablePath } from "../lib/loggable-path.js";
import type { AppEnv } from "./env.js";

/**
 * The one place errors become HTTP: Turso's `{"error": "..."}` body (plus `code` when the error
 * has one). Anything that isn't an AppError is a bug: the client gets a 500 with a request id
 * only, and the cause goes to the log.
 */
export function errorResponse(err: unknown, c: Context<AppEnv>): Response {
  if (err instanceof AppError) {
    const body = err.code ? { error: err.message, code: err.code } : { error: err.message };
    return c.json(body, STATUS_OF_KIND[err.kind]);
  }
  const requestId = c.get("requestId");
  // The request's own logger: the line carries the request id the client is shown.
  c.get("deps").log.error({ err, method: c.req.method, path: loggablePath(c.req.path) }, "unhandled error");
  return c.json({ error: `internal error (request ${requestId})` }, 500);
}
