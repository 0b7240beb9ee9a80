import type { IncomingMessage } from "node:http";

/**
 * Browsers call the data plane cross-origin (with authorization and content-type headers, and the
 * sync client's encryption headers), so it answers CORS; the headers go only to requests that
 * carry an Origin, i.e. from browsers.
 */
export const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers":
    "authorization, content-type, x-turso-encryption-key, x-turso-encryption-cipher",
  "access-control-max-age": "86400",
};

export function corsHeaders(req: IncomingMessage): Record<string, string> {
  return req.headers.origin !== undefined ? CORS : {};
}
