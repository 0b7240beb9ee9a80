import { EventEmitter } from "node:events";
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { HopRequestHead } from "./hop-frames.js";

/**
 * A request that came over the SQL hop, as the data plane reads one: method, URL, headers, the
 * client's address, and its body as a stream that is already whole. Only what the data plane's
 * SQL endpoints read of node's `IncomingMessage` is here; the cast in `asIncoming` is the one
 * place that pretends otherwise.
 */
class HopRequest extends Readable {
  readonly headers: IncomingHttpHeaders;
  readonly method: string;
  readonly url: string;
  readonly socket: { remoteAddress: string | undefined };
  /** Its body came whole with it (http-io.ts then takes it without waiting). */
  readonly complete = true;

  constructor(head: HopRequestHead, body: Buffer) {
    super();
    this.headers = head.headers;
    this.method = head.method;
    this.url = head.url;
    this.socket = { remoteAddress: head.peer };
    if (body.length > 0) this.push(body);
    this.push(null);
  }

  override _read(): void {}
}

/** Where a `HopResponse` sends what it is given (hop-server.ts frames it). */
export interface AnswerSink {
  /** The answer whole, in one go (most answers). */
  whole(status: number, headers: OutgoingHttpHeaders, body: Buffer | string): void;
  head(status: number, headers: OutgoingHttpHeaders): void;
  chunk(bytes: Buffer | string): void;
  end(bytes: Buffer | string | undefined): void;
  /** The answer broke off (its head went out): the client's connection must be cut. */
  abort(): void;
  /** Whether the link to the sender has room for more now. */
  hasRoom(): boolean;
}

/**
 * The answer to a hop request, as the data plane writes one: status and headers, then the body
 * in one piece or several. What it is given goes to `sink` as it comes; `write` says to wait
 * (false, then `drain`) while the sender's client isn't reading or the link is full.
 */
class HopResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  writableFinished = false;
  destroyed = false;
  private headers: OutgoingHttpHeaders = {};
  private headOut = false;
  private paused = false;

  constructor(
    readonly req: IncomingMessage,
    private readonly sink: AnswerSink,
  ) {
    super();
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.headers[name.toLowerCase()] = value as string;
    return this;
  }

  getHeader(name: string): string | number | string[] | undefined {
    return this.headers[name.toLowerCase()];
  }

  writeHead(status: number, a?: string | OutgoingHttpHeaders, b?: OutgoingHttpHeaders): this {
    const given = typeof a === "string" ? b : a;
    this.statusCode = status;
    for (const [k, v] of Object.entries(given ?? {})) if (v !== undefined) this.headers[k.toLowerCase()] = v;
    this.headersSent = true;
    return this;
  }

  write(chunk: Buffer | string): boolean {
    if (this.destroyed || this.writableFinished) return false;
    this.sendHead();
    this.sink.chunk(chunk);
    return !this.paused && this.sink.hasRoom();
  }

  end(chunk?: Buffer | string): this {
    if (this.destroyed || this.writableFinished) return this;
    this.headersSent = true;
    if (this.headOut) this.sink.end(chunk);
    else this.sink.whole(this.statusCode, this.headers, chunk ?? "");
    this.headOut = true;
    this.writableFinished = true;
    this.emit("finish");
    process.nextTick(() => this.emit("close"));
    return this;
  }

  /** Ends the answer where it is: the client's side is cut (or was: `fromSender`). */
  destroy(fromSender = false): this {
    if (this.destroyed || this.writableFinished) return this;
    this.destroyed = true;
    // The sender's client loses its connection, as it would if this process served it.
    if (!fromSender) this.sink.abort();
    process.nextTick(() => this.emit("close"));
    return this;
  }

  /** The sender's client stopped, or started again, taking the answer's bytes. */
  pause(paused: boolean): void {
    this.paused = paused;
    if (!paused) this.emit("drain");
  }

  /** The link to the sender has room again. */
  linkDrained(): void {
    if (!this.paused) this.emit("drain");
  }

  private sendHead(): void {
    if (this.headOut) return;
    this.headOut = true;
    this.headersSent = true;
    this.sink.head(this.statusCode, this.headers);
  }
}

export type HopExchange = { req: IncomingMessage; res: ServerResponse; control: HopResponse };

/** A hop request and its answer, as node's request and response objects to the data plane. */
export function asIncoming(head: HopRequestHead, body: Buffer, sink: AnswerSink): HopExchange {
  const req = new HopRequest(head, body) as unknown as IncomingMessage;
  const control = new HopResponse(req, sink);
  return { req, res: control as unknown as ServerResponse, control };
}
