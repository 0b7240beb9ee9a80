import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { NodeAddress } from "../../domain/cluster/holders.js";
import { NOT_SENT_CODES } from "../../lib/hop-by-hop.js";
import { corsHeaders } from "../cors.js";
import { type ForwardingMarks, requestHeaders, responseHeaders } from "./headers.js";
import { forwardRefusals, type Refusal, refusalBody } from "./messages.js";
import { BodyCopy, closedBeforeTaken } from "./replay.js";

/** A holder that hasn't accepted the connection in this long counts as unreachable. */
export const CONNECT_TIMEOUT_MS = 5000;
/** Failures before the connection to the holder exists: nothing was sent, nothing can have changed. */
const NOT_SENT = new Set(NOT_SENT_CODES);

class ConnectTimeout extends Error {
  readonly code = "ETIMEDOUT_CONNECT";
  constructor() {
    super(`no connection within ${CONNECT_TIMEOUT_MS} ms`);
  }
}

/**
 * Idle connections to other nodes are kept for the next request (the hop costs a round trip,
 * not a handshake), and dropped before the holder's own keep-alive timeout (5 s) would close
 * them under a request.
 */
export const agents = {
  "http:": new http.Agent({ keepAlive: true, timeout: 4000 }),
  "https:": new https.Agent({ keepAlive: true, timeout: 4000 }),
};

/** Answers a refusal of the forwarding itself. */
export function refuse(res: ServerResponse, r: Refusal, requestId: string): void {
  const body = Buffer.from(refusalBody(r));
  res.writeHead(r.status, {
    "content-type": "application/json",
    "content-length": body.length,
    "x-request-id": requestId,
    ...corsHeaders(res.req),
  });
  res.end(body);
}

/** Why a connection failed, in a few words; and whether it failed before anything was sent. */
export function failure(e: unknown, connected: boolean): { why: string; sent: boolean } {
  const err = e as NodeJS.ErrnoException;
  const why = err.code ? `${err.code}: ${err.message}` : String(err.message ?? e);
  return { why, sent: connected || !(err instanceof ConnectTimeout || NOT_SENT.has(err.code ?? "")) };
}

/** Limits the wait for the connection to the holder; returns whether it was made. */
export function connectWithin(req: http.ClientRequest): () => boolean {
  let connected = false;
  req.on("socket", (socket) => {
    // Small requests and answers go out at once, not after a delayed ACK (Nagle).
    socket.setNoDelay(true);
    if (!socket.connecting) {
      connected = true;
      return;
    }
    const timer = setTimeout(() => req.destroy(new ConnectTimeout()), CONNECT_TIMEOUT_MS);
    socket.once("connect", () => {
      connected = true;
      clearTimeout(timer);
    });
    socket.once("close", () => clearTimeout(timer));
  });
  return () => connected;
}

/**
 * Sends one data-plane request on to the node holding its database and streams the answer back.
 * Both bodies flow through as they arrive, with backpressure (`pipe`), so a large upload, a
 * `/dump` or a long-polling `pull-updates` cost this node a few buffers, never a whole body. A
 * client that goes away cancels the request at the holder. A request that meets a pooled
 * connection the holder had already closed is sent once more on a fresh one.
 */
export function proxyHttp(
  req: IncomingMessage,
  res: ServerResponse,
  to: { holder: NodeAddress; database: string },
  marks: ForwardingMarks,
): void {
  const copy = new BodyCopy(req);
  // The client hung up (or its connection broke) before the whole answer went out.
  let out: http.ClientRequest | undefined;
  res.on("close", () => {
    if (!res.writableFinished) out?.destroy();
  });
  req.on("error", () => out?.destroy());
  const attempt = (pooled: boolean): void => {
    out = sendOn(req, res, to, marks, { copy, pooled, again: () => attempt(false) });
  };
  attempt(true);
}

interface Attempt {
  copy: BodyCopy;
  /** First try: on the shared pool of connections; the second goes on a connection of its own. */
  pooled: boolean;
  again: () => void;
}

function sendOn(
  req: IncomingMessage,
  res: ServerResponse,
  to: { holder: NodeAddress; database: string },
  marks: ForwardingMarks,
  { copy, pooled, again }: Attempt,
): http.ClientRequest {
  const target = new URL(to.holder.url);
  const protocol = target.protocol === "https:" ? "https:" : "http:";
  const send = protocol === "https:" ? https.request : http.request;
  const out = send({
    protocol,
    hostname: target.hostname.replace(/^\[|\]$/g, ""),
    port: target.port || undefined,
    method: req.method,
    path: req.url ?? "/",
    headers: requestHeaders(req.headers, marks),
    agent: pooled ? agents[protocol] : false,
  });
  const connected = connectWithin(out);
  out.on("response", (answer) => {
    copy.drop();
    res.writeHead(
      answer.statusCode ?? 502,
      answer.statusMessage,
      responseHeaders(answer.headers, marks.self === undefined ? undefined : to.holder.id),
    );
    answer.pipe(res);
    answer.on("error", () => res.destroy());
  });
  out.on("error", (e) => {
    req.unpipe(out);
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    const untaken = closedBeforeTaken(e, out.reusedSocket);
    if (untaken && pooled && copy.sofar()) return again();
    const { why, sent } = failure(e, connected());
    // The client may still be sending a body nobody will read: answer, then close.
    res.setHeader("connection", "close");
    const refusal =
      sent && !untaken
        ? forwardRefusals.failed(to.database, to.holder, why)
        : forwardRefusals.unreachable(to.database, to.holder, why);
    refuse(res, refusal, marks.requestId);
  });
  if (!pooled) for (const chunk of copy.sofar() ?? []) out.write(chunk);
  if (req.readableEnded) out.end();
  else req.pipe(out);
  return out;
}
