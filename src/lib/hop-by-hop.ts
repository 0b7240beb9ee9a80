/**
 * What a node forwarding a request to another must not pass on, and how it tells a request that
 * never left from one that may have run. Shared by the management API's forwarding (over `fetch`)
 * and the data plane's (over `node:http`).
 */

/**
 * Request headers that describe one connection rather than the request (RFC 9110 §7.6.1), and
 * `expect`: the forwarding node has already answered "continue" itself.
 */
export const HOP_BY_HOP_REQUEST = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "http2-settings",
  "transfer-encoding",
];

/** Connection errors raised before the other node accepted anything: nothing can have changed. */
export const NOT_SENT_CODES = ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"];
