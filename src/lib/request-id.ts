import { randomUUID } from "node:crypto";

/** The header that carries a request's id, both ways. */
export const REQUEST_ID_HEADER = "x-request-id";

/**
 * A caller's own id (from a proxy or tracing), when it is safe to echo and log: printable, short,
 * without spaces or quotes that could forge a log line. Otherwise a new one.
 */
const SANE = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The id of a request: the caller's `X-Request-Id` when sane, else a fresh UUID. */
export function requestIdOf(header: string | string[] | undefined): string {
  const given = Array.isArray(header) ? header[0] : header;
  return given !== undefined && SANE.test(given) ? given : randomUUID();
}
