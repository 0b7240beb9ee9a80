import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import type { NodeAddress } from "../../domain/cluster/holders.js";
import { type ForwardingMarks, requestHeaders } from "./headers.js";
import { CONNECT_TIMEOUT_MS, failure } from "./http-proxy.js";
import { forwardRefusals, type Refusal, refusalBody } from "./messages.js";

/** As the data plane's own WebSocket server: the largest message either side may send. */
const MAX_PAYLOAD = 16 * 1024 * 1024;
/** Past this much unsent toward one side, reading from the other pauses until it drains. */
const HIGH_WATER = 1024 * 1024;

/** Answers an upgrade with a plain HTTP refusal and closes the connection. */
export function refuseUpgrade(socket: Duplex, r: Refusal, requestId: string): void {
  const body = refusalBody(r);
  const reason =
    r.status === 421 ? "Misdirected Request" : r.status === 502 ? "Bad Gateway" : "Service Unavailable";
  socket.end(
    `HTTP/1.1 ${r.status} ${reason}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A subprotocol name: an HTTP token (RFC 9110). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The subprotocols a client offered; undefined when one isn't a token or one repeats. ws's client
 * throws on such a list (in the event handler of an upgrade, which would end the process), and
 * ws's server refuses it: this refuses it too, as the data plane would without a hop between.
 */
function subprotocols(header: string | string[] | undefined): string[] | undefined {
  const offered = String(header ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (new Set(offered).size !== offered.length || !offered.every((p) => TOKEN.test(p))) return undefined;
  return offered;
}

/** ws's own server's answer to a malformed `Sec-WebSocket-Protocol`. */
function refuseBadProtocols(socket: Duplex): void {
  const body = "Invalid Sec-WebSocket-Protocol header";
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A close code one side may send on: the reserved "no code" and "abnormal" ones become plain ones. */
function relayable(code: number): number {
  if (code === 1005) return 1000;
  if (code === 1006 || code === 1015) return 1011;
  return code;
}

/** Sends `from`'s messages to `to` as they come, pausing `from` while `to` is backed up. */
function pipeMessages(from: WebSocket, to: WebSocket): void {
  from.on("message", (data, isBinary) => {
    if (to.readyState !== WebSocket.OPEN) return;
    to.send(data, { binary: isBinary }, () => {
      if (to.bufferedAmount < HIGH_WATER && from.isPaused) from.resume();
    });
    if (to.bufferedAmount >= HIGH_WATER) from.pause();
  });
  from.on("close", (code, reason) => {
    if (to.readyState === WebSocket.OPEN) to.close(relayable(code), reason);
    else if (to.readyState === WebSocket.CONNECTING) to.terminate();
  });
  from.on("error", () => to.terminate());
}

/**
 * Serves a WebSocket upgrade for a database another node holds: opens a WebSocket to that node
 * with the client's headers (Host, Authorization, subprotocols) first, and only once it is open
 * accepts the client's, with the subprotocol the holder chose; from then on messages go both
 * ways unchanged and either side closing closes the other. A holder that can't be reached, or
 * refuses the upgrade, is answered at once with an HTTP error: nothing is half-open.
 */
export class WebSocketProxy {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD });
  private readonly open = new Set<WebSocket>();

  upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    to: { holder: NodeAddress; database: string },
    marks: ForwardingMarks,
  ): void {
    const url = new URL(req.url ?? "/", to.holder.url);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const offered = subprotocols(req.headers["sec-websocket-protocol"]);
    if (!offered) {
      refuseBadProtocols(socket);
      return;
    }
    const upstream = new WebSocket(url, offered, {
      headers: requestHeaders(req.headers, marks, true) as Record<string, string>,
      maxPayload: MAX_PAYLOAD,
      handshakeTimeout: CONNECT_TIMEOUT_MS,
      perMessageDeflate: false,
    });
    let settled = false;
    const giveUp = (r: Refusal) => {
      if (settled) return;
      settled = true;
      upstream.terminate();
      refuseUpgrade(socket, r, marks.requestId);
    };
    socket.once("close", () => {
      if (!settled) upstream.terminate();
      settled = true;
    });
    // A client connection that breaks, before or after the upgrade, takes the holder's with it.
    socket.on("error", () => upstream.terminate());
    upstream.once("unexpected-response", (_request, answer) =>
      this.relayRefusal(socket, answer, () => {
        settled = true;
        upstream.terminate();
      }),
    );
    // No statement runs before the handshake completes: whatever failed, nothing changed.
    upstream.on("error", (e) =>
      giveUp(forwardRefusals.unreachable(to.database, to.holder, failure(e, false).why)),
    );
    upstream.once("open", () => {
      if (settled) return;
      settled = true;
      this.accept(req, socket, head, upstream);
    });
  }

  /** Closes every proxied connection, both sides (at shutdown). */
  closeAll(): void {
    for (const ws of this.open) ws.close(1001, "server shutting down");
  }

  private accept(req: IncomingMessage, socket: Duplex, head: Buffer, upstream: WebSocket): void {
    const chosen = upstream.protocol;
    // The client gets the subprotocol the holder picked (none if it picked none).
    req.headers["sec-websocket-protocol"] = chosen || undefined;
    if (!chosen) delete req.headers["sec-websocket-protocol"];
    this.wss.handleUpgrade(req, socket, head, (client) => {
      this.open.add(client);
      client.once("close", () => this.open.delete(client));
      pipeMessages(client, upstream);
      pipeMessages(upstream, client);
      upstream.on("error", () => client.terminate());
    });
  }

  /** The holder answered the upgrade with an HTTP error (a 401, a 404): the client gets the same. */
  private relayRefusal(socket: Duplex, answer: IncomingMessage, done: () => void): void {
    const chunks: Buffer[] = [];
    answer.on("data", (c: Buffer) => chunks.push(c));
    answer.on("end", () => {
      done();
      const body = Buffer.concat(chunks);
      const type = answer.headers["content-type"] ?? "text/plain";
      socket.end(
        `HTTP/1.1 ${answer.statusCode} ${answer.statusMessage ?? ""}\r\nContent-Type: ${type}\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString("latin1")}`,
        "latin1",
      );
    });
    answer.on("error", () => {
      done();
      socket.destroy();
    });
  }
}
