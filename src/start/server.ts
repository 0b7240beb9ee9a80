import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { DataPlane } from "../dataplane/data-plane.js";
import { routeRequest } from "../dataplane/routing.js";
import { listen } from "./listener.js";

/** Requests still running this long after shutdown starts are cut off. */
export const SHUTDOWN_DEADLINE_MS = 15_000;

/** What answers once the process serves: the data plane, and the management API's listener. */
export interface Handlers {
  dataPlane: Pick<DataPlane, "handle" | "upgrade">;
  api: (req: IncomingMessage, res: ServerResponse) => unknown;
}

/**
 * The one HTTP port. A request whose Host or path names a database goes to the data plane (on
 * node's own request objects: it is the hot path), everything else to the management API. Until
 * `serve` is called every request is answered 503, so the port can be bound first at start.
 */
export class ShoalServer {
  private readonly server: Server;
  private serving: Handlers | undefined;
  private pulls:
    | ((req: IncomingMessage, res: ServerResponse, dbId: string, path: string) => unknown)
    | undefined;

  constructor(
    private readonly dbDomain: string,
    headersTimeoutMs = 60_000,
  ) {
    // Slow clients cost only their socket: headers must arrive in time, and idle or slow sockets
    // are checked every second rather than Node's thirty (SQL bodies have their own limit, see
    // dataplane/http-io.ts).
    this.server = createServer(
      { headersTimeout: headersTimeoutMs, connectionsCheckingInterval: 1000 },
      (req, res) => this.request(req, res),
    );
    this.server.on("upgrade", (req, socket, head: Buffer) => this.upgrade(req, socket, head));
  }

  /** Binds the port; a port that can't be had throws a `StartError` saying why. */
  listen(host: string, port: number): Promise<void> {
    return listen(this.server, host, port);
  }

  /** The port bound (the one asked for, or the one chosen for port 0). */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  serve(handlers: Handlers): void {
    this.serving = handlers;
  }

  /**
   * Serves this node's own replicas' pulls through the relay (`dataplane/forward/pull-relay.ts`)
   * before everything else: a former primary is rebuilt as a replica at start, before `serve`.
   */
  servePulls(
    relay: (req: IncomingMessage, res: ServerResponse, dbId: string, path: string) => unknown,
  ): void {
    this.pulls = relay;
  }

  /**
   * Stops accepting connections and resolves once the open ones are done. Keep-alive connections
   * that go idle once their request finishes would otherwise hold the close for the keep-alive
   * timeout; a stuck request is cut after the deadline.
   */
  async close(): Promise<void> {
    const { server } = this;
    if (!server.listening) return;
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    const sweep = setInterval(() => server.closeIdleConnections(), 25);
    const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_DEADLINE_MS);
    server.closeIdleConnections();
    await drained;
    clearInterval(sweep);
    clearTimeout(deadline);
  }

  private request(req: IncomingMessage, res: ServerResponse): void {
    if (!this.serving) {
      const route = this.pulls && routeRequest(req.headers.host, req.url ?? "/", this.dbDomain);
      if (route && "id" in route.locator && route.path.startsWith("/relay/")) {
        void this.pulls?.(req, res, route.locator.id, route.path);
        return;
      }
      res.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
      res.end(JSON.stringify({ error: "shoal is starting; retry in a moment" }));
      return;
    }
    const route = routeRequest(req.headers.host, req.url ?? "/", this.dbDomain);
    if (route) void this.serving.dataPlane.handle(req, res, route);
    else void this.serving.api(req, res);
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (!this.serving) {
      socket.end("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n\r\n");
      return;
    }
    const route = routeRequest(req.headers.host, req.url ?? "/", this.dbDomain);
    if (!route) socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
    else this.serving.dataPlane.upgrade(req, socket, head, route);
  }
}
