import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import net, { type Socket } from "node:net";
import path from "node:path";
import { answerFailure } from "../dataplane/http-errors.js";
import { MAX_BODY_BYTES, readBodyBytes } from "../dataplane/http-io.js";
import { HOP_BY_HOP_REQUEST } from "../lib/hop-by-hop.js";
import type { Logger } from "../lib/logger.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../lib/request-id.js";
import { encodeFrame, FrameReader, type HopAnswerHead, type HopRequestHead, Kind } from "./hop-frames.js";
import { refuseHttp, shardFailed, shardGone } from "./refusals.js";

/** The SQL endpoints the hop carries: a body read whole, an answer of bounded size. */
const CARRIED = new Set(["/v2/pipeline", "/v3/pipeline", "/v3/cursor"]);
/** Request headers not sent on: they describe the client's connection, not the request. */
const NOT_SENT = new Set([...HOP_BY_HOP_REQUEST, "content-length"]);
/** Answer headers the receiving process's own server sets for its connection. */
const NOT_ANSWERED = new Set(["connection", "keep-alive", "transfer-encoding"]);
/** After a link failed, this long before it is tried again (meanwhile requests take the HTTP hop). */
const RETRY_MS = 250;

/** The Unix socket shard `index` takes hop requests on, in the node's hop folder. */
export function hopSocketPath(dir: string, index: number): string {
  return path.join(dir, `shard-${index}.sock`);
}

/**
 * Whether the SQL hop carries a request: a POST to one of the SQL endpoints with a body the data
 * plane would read. Anything else (uploads, exports, sync, WebSockets) takes the HTTP hop.
 */
export function carried(req: IncomingMessage, path: string): boolean {
  return (
    req.method === "POST" && CARRIED.has(path) && Number(req.headers["content-length"] ?? 0) <= MAX_BODY_BYTES
  );
}

interface Outgoing {
  res: ServerResponse;
  /** The client isn't taking the answer's bytes: the owner was asked to hold them. */
  paused: boolean;
}

/**
 * One shard's link to another's hop socket: requests out, answers back, by request id. It
 * connects on first use; a link that fails is tried again a moment later.
 */
class PeerLink {
  private socket: Socket | undefined;
  private connected = false;
  private retryAt = 0;
  private nextId = 1;
  private readonly outgoing = new Map<number, Outgoing>();

  constructor(
    private readonly socketPath: string,
    private readonly index: number,
    private readonly log: Logger,
  ) {}

  /** Whether requests can go now; starts connecting when they can't (they take the HTTP hop meanwhile). */
  ready(): boolean {
    if (this.connected) return true;
    if (!this.socket && Date.now() >= this.retryAt) this.connect();
    return false;
  }

  send(head: HopRequestHead, body: Buffer, res: ServerResponse): void {
    const socket = this.socket;
    if (!this.connected || !socket) {
      refuseHttp(res, shardGone(this.index));
      return;
    }
    const id = this.nextId;
    this.nextId = this.nextId >= 0xffff_fffe ? 1 : this.nextId + 1;
    const out: Outgoing = { res, paused: false };
    this.outgoing.set(id, out);
    res.once("close", () => {
      // The client went away before its whole answer: the owner stops too.
      if (this.outgoing.delete(id) && this.connected) this.write(encodeFrame(Kind.Abort, id));
    });
    this.write(encodeFrame(Kind.Request, id, head, body));
  }

  /** Requests sent and not yet answered. */
  get waiting(): number {
    return this.outgoing.size;
  }

  close(): void {
    this.socket?.destroy();
  }

  private write(frame: Buffer): void {
    const socket = this.socket;
    if (!socket || socket.destroyed) return;
    // Several requests of one turn go out in one write.
    if (!socket.writableCorked) {
      socket.cork();
      process.nextTick(() => socket.uncork());
    }
    socket.write(frame);
  }

  private connect(): void {
    const socket = net.connect(this.socketPath);
    this.socket = socket;
    const reader = new FrameReader();
    socket.once("connect", () => {
      this.connected = true;
    });
    socket.on("data", (chunk: Buffer) => {
      try {
        for (const f of reader.push(chunk)) this.answer(f.kind, f.id, f.head as HopAnswerHead, f.payload);
      } catch (e) {
        this.log.error({ err: e, shard: this.index }, "a hop answer can't be read: the link is closed");
        socket.destroy();
      }
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      this.socket = undefined;
      this.connected = false;
      this.retryAt = Date.now() + RETRY_MS;
      const cut = [...this.outgoing.values()];
      this.outgoing.clear();
      for (const { res } of cut) {
        if (res.headersSent) res.destroy();
        else {
          res.setHeader("connection", "close");
          refuseHttp(res, shardFailed(this.index));
        }
      }
    });
  }

  private answer(kind: number, id: number, head: HopAnswerHead | undefined, payload: Buffer): void {
    const out = this.outgoing.get(id);
    if (!out) return;
    const { res } = out;
    switch (kind) {
      case Kind.Answer:
        this.outgoing.delete(id);
        res.writeHead(head!.status, answerHeaders(head!.headers));
        res.end(payload);
        return;
      case Kind.Head:
        res.writeHead(head!.status, answerHeaders(head!.headers));
        return;
      case Kind.Chunk:
        if (res.write(payload) || out.paused) return;
        out.paused = true;
        this.write(encodeFrame(Kind.Pause, id));
        res.once("drain", () => {
          out.paused = false;
          if (this.outgoing.has(id)) this.write(encodeFrame(Kind.Resume, id));
        });
        return;
      case Kind.End:
        this.outgoing.delete(id);
        res.end(payload);
        return;
      case Kind.Abort:
        this.outgoing.delete(id);
        // Refused before it ran (the owner was stopping); else cut off, as the owner would cut
        // a connection of its own.
        if ((head as { refused?: boolean } | undefined)?.refused && !res.headersSent)
          refuseHttp(res, shardGone(this.index));
        else res.destroy();
        return;
    }
  }
}

function answerHeaders(headers: HopAnswerHead["headers"]): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (!NOT_ANSWERED.has(k)) out[k] = v;
  return out;
}

/**
 * Sends SQL requests on to the shard serving their database over a Unix socket, already parsed:
 * the request's method, URL, headers and client address as a small JSON head, its body as it
 * came, and the answer's bytes back. A request for another shard's database on a connection this
 * shard serves (a client or proxy pooling connections across databases) costs one write and one
 * read each way, instead of a second HTTP exchange over loopback.
 */
export class SqlHop {
  private readonly links = new Map<number, PeerLink>();
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly bodyTimeoutMs: number,
    private readonly log: Logger,
  ) {}

  /**
   * Sends `req` on to shard `to`; false when it doesn't go this way (not a carried endpoint, or
   * the link isn't up yet), and then the caller sends it on over HTTP.
   */
  send(req: IncomingMessage, res: ServerResponse, to: number, path: string): boolean {
    if (this.closed || !carried(req, path)) return false;
    let link = this.links.get(to);
    if (!link) {
      link = new PeerLink(hopSocketPath(this.dir, to), to, this.log);
      this.links.set(to, link);
    }
    if (!link.ready()) return false;
    const requestId = requestIdOf(req.headers[REQUEST_ID_HEADER]);
    const head: HopRequestHead = {
      method: "POST",
      url: req.url ?? "/",
      headers: requestHeaders(req, requestId),
      peer: req.socket.remoteAddress,
    };
    readBodyBytes(req, this.bodyTimeoutMs).then(
      (body) => link.send(head, body, res),
      (e: unknown) => {
        res.setHeader(REQUEST_ID_HEADER, requestId);
        answerFailure(req, res, e, requestId, this.log);
      },
    );
    return true;
  }

  /**
   * Sends nothing more; the answers still awaited come in (the owner finishes what it started,
   * as its own connections' requests), then the links close. Past `deadlineMs` they close anyway.
   */
  async close(deadlineMs = 15_000): Promise<void> {
    this.closed = true;
    const deadline = Date.now() + deadlineMs;
    const waiting = () => [...this.links.values()].some((l) => l.waiting > 0);
    while (waiting() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const l of this.links.values()) l.close();
    this.links.clear();
  }
}

/** What is sent on of a request's headers, with its request id fixed here so both processes log the same. */
function requestHeaders(req: IncomingMessage, requestId: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const h = req.headers;
  for (const k in h) {
    const v = h[k];
    if (v !== undefined && !NOT_SENT.has(k)) out[k] = v;
  }
  out[REQUEST_ID_HEADER] = requestId;
  return out;
}
