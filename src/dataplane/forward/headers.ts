import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { HOP_BY_HOP_REQUEST } from "../../lib/hop-by-hop.js";
import { CLIENT_PROOF, FORWARDED_BY } from "./proof.js";

/** Hop-by-hop headers, and the forwarding proof a client might have written itself. */
const DROP_REQUEST = new Set([...HOP_BY_HOP_REQUEST, CLIENT_PROOF]);
/** The WebSocket handshake's own headers: the `ws` client writes its own for the second leg. */
const DROP_HANDSHAKE = [
  "sec-websocket-key",
  "sec-websocket-version",
  "sec-websocket-extensions",
  "sec-websocket-protocol",
];
const DROP_RESPONSE = new Set(["connection", "keep-alive", "transfer-encoding", "proxy-connection"]);

/** Headers the client named in `Connection` are hop-by-hop too. */
function listedIn(connection: string | undefined): Set<string> {
  return new Set(
    (connection ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== ""),
  );
}

export interface ForwardingMarks {
  /**
   * This node's id, so the holder never forwards the request again. Absent on a request sent on
   * between two processes of one node (src/shards/hop.ts): for the node, it was never forwarded.
   */
  self?: string;
  /** The signed client address (`ClientProof.sign`). */
  proof: string;
  /** The client's address, appended to `X-Forwarded-For` for the holder's logs and proxies. */
  peer: string | undefined;
  requestId: string;
}

/**
 * What the holder receives: the client's headers as sent (Host included, since the holder finds
 * the database by it, Authorization and the encryption key untouched), less the hop-by-hop ones,
 * plus the forwarding marks.
 */
export function requestHeaders(
  incoming: IncomingHttpHeaders,
  marks: ForwardingMarks,
  handshake = false,
): OutgoingHttpHeaders {
  const listed = listedIn(incoming.connection);
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || DROP_REQUEST.has(name) || listed.has(name)) continue;
    if (handshake && DROP_HANDSHAKE.includes(name)) continue;
    out[name] = value;
  }
  const before = incoming["x-forwarded-for"];
  const chain = Array.isArray(before) ? before.join(", ") : before;
  if (marks.peer !== undefined) out["x-forwarded-for"] = chain ? `${chain}, ${marks.peer}` : marks.peer;
  if (marks.self !== undefined) out[FORWARDED_BY] = marks.self;
  out[CLIENT_PROOF] = marks.proof;
  out["x-request-id"] = marks.requestId;
  return out;
}

/** The holder's answer headers, for the client: its own, less the hop-by-hop ones (and the holder named). */
export function responseHeaders(
  incoming: IncomingHttpHeaders,
  servedBy: string | undefined,
): OutgoingHttpHeaders {
  const listed = listedIn(incoming.connection);
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined && !DROP_RESPONSE.has(name) && !listed.has(name)) out[name] = value;
  }
  if (servedBy !== undefined) out["x-shoal-served-by"] = servedBy;
  return out;
}
