import net, { type Server, type Socket } from "node:net";
import type { SecureContext } from "node:tls";
import { headEnd, parseHead, type RequestHead } from "./request-head.js";
import {
  isTlsHello,
  PLAIN_ON_TLS_PORT,
  refuseTlsHello,
  serverName,
  type WrongProtocol,
  wrapTls,
} from "./tls-door.js";

/** Where a connection goes: this process's own server, or a shard. */
export type Target = { kind: "primary" } | { kind: "shard"; index: number };

export interface RouterOptions {
  /** A connection's first request head must be whole within this long. */
  headersTimeoutMs: number;
  /** Longest first request head read before answering 431 (Node's own default is 16 KiB). */
  maxHeadBytes?: number;
  /** Set when the port speaks TLS: the context a new connection's handshake uses (tls-door.ts). */
  tls?: () => SecureContext;
  /** Told of each connection refused for speaking the other protocol than the port's. */
  wrongProtocol?: (w: WrongProtocol, remoteAddress: string | undefined) => void;
}

export interface Delivery {
  decide(head: RequestHead): Target | Promise<Target>;
  /**
   * Takes the connection with the bytes read from it so far (the first head, maybe more; with
   * `tls`, the first bytes of a TLS handshake, for the shard to answer).
   */
  deliver(target: Target, socket: Socket, bytes: Buffer, tls?: boolean): void;
}

const DEFAULT_MAX_HEAD = 16 * 1024 + 1024;

function answerAndClose(socket: Socket, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroySoon?.();
}

/**
 * The node's public port. It reads each new connection's first request head, only as far as the
 * database it names, and hands the connection, with those bytes, to the process that serves it:
 * the shard owning the database, or this process (management API, and the node's own replication
 * traffic). The connection is the unit: requests that follow on a kept-alive connection go to the
 * same process, which sends on any for another database (see hop.ts). Clients that address a
 * database by hostname, as Turso's do, keep one connection per database, so nearly every request
 * is served where it lands.
 */
export class PublicRouter {
  private readonly server: Server;
  private readonly reading = new Set<Socket>();

  constructor(
    private readonly opts: RouterOptions,
    private readonly delivery: Delivery,
  ) {
    this.server = net.createServer({ noDelay: true }, (socket) => this.accept(socket));
  }

  get netServer(): Server {
    return this.server;
  }

  /**
   * Stops accepting (the port is free at once); connections still being read are closed. Those
   * handed over are their servers' to drain: `net.Server`'s own close would wait for them too.
   */
  close(): void {
    for (const s of this.reading) s.destroy();
    this.reading.clear();
    if (this.server.listening) this.server.close();
  }

  private accept(socket: Socket): void {
    this.reading.add(socket);
    const chunks: Buffer[] = [];
    let size = 0;
    const limit = this.opts.maxHeadBytes ?? DEFAULT_MAX_HEAD;
    const done = () => {
      clearTimeout(timer);
      socket.off("data", onData);
      this.reading.delete(socket);
    };
    // Slow or silent clients cost only their socket, and only this long.
    const timer = setTimeout(() => {
      done();
      answerAndClose(socket, "408 Request Timeout");
    }, this.opts.headersTimeoutMs);
    let plainOnTlsPort = false;
    const onData = (chunk: Buffer) => {
      if (chunks.length === 0 && this.firstBytes(socket, chunk, done)) return;
      if (chunks.length === 0) plainOnTlsPort = this.opts.tls !== undefined;
      chunks.push(chunk);
      size += chunk.length;
      const bytes = chunks.length === 1 ? chunk : Buffer.concat(chunks, size);
      const end = headEnd(bytes);
      if (end === -1) {
        if (size > limit) {
          done();
          answerAndClose(socket, "431 Request Header Fields Too Large");
        }
        return;
      }
      done();
      if (plainOnTlsPort) {
        // The whole head was read first, so the client is listening when the answer comes.
        this.opts.wrongProtocol?.("plain-on-tls-port", socket.remoteAddress);
        socket.end(PLAIN_ON_TLS_PORT);
        socket.destroySoon?.();
        return;
      }
      socket.pause();
      const head = parseHead(bytes, end);
      this.route(socket, head, bytes);
    };
    socket.on("data", onData);
    socket.on("error", () => {
      done();
      socket.destroy();
    });
  }

  /**
   * Looks at a connection's first bytes for a TLS handshake. On a TLS port, a handshake naming a
   * database's hostname (SNI) goes to the shard owning it, which answers the handshake itself; any
   * other is answered here and served by this process, which sends data-plane requests on to the
   * shards. On a plain port, it is refused at once with a TLS alert instead of waiting out the
   * head timeout. Answers true when it took the connection.
   */
  private firstBytes(socket: Socket, chunk: Buffer, done: () => void): boolean {
    if (!isTlsHello(chunk)) return false;
    done();
    const tls = this.opts.tls;
    if (!tls) {
      this.opts.wrongProtocol?.("tls-on-plain-port", socket.remoteAddress);
      refuseTlsHello(socket);
      return true;
    }
    socket.pause();
    const deliver = (target: Target) => {
      if (socket.destroyed) return;
      if (target.kind === "shard") return this.delivery.deliver(target, socket, chunk, true);
      const secure = wrapTls(socket, chunk, tls(), this.opts.headersTimeoutMs);
      this.delivery.deliver(target, secure, Buffer.alloc(0));
    };
    const primary: Target = { kind: "primary" };
    const name = serverName(chunk);
    let target: Target | Promise<Target> = primary;
    try {
      if (name) target = this.delivery.decide({ method: "GET", url: "/", host: name });
    } catch {
      target = primary;
    }
    if (target instanceof Promise) target.then(deliver, () => deliver(primary));
    else deliver(target);
    return true;
  }

  private route(socket: Socket, head: RequestHead | undefined, bytes: Buffer): void {
    const primary: Target = { kind: "primary" };
    if (!head) {
      this.delivery.deliver(primary, socket, bytes);
      return;
    }
    let target: Target | Promise<Target>;
    try {
      target = this.delivery.decide(head);
    } catch {
      target = primary;
    }
    if (!(target instanceof Promise)) {
      this.delivery.deliver(target, socket, bytes);
      return;
    }
    target.then(
      (t) => (socket.destroyed ? undefined : this.delivery.deliver(t, socket, bytes)),
      () => (socket.destroyed ? undefined : this.delivery.deliver(primary, socket, bytes)),
    );
  }
}
