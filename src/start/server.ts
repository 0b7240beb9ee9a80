import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { routeRequest } from "../dataplane/routing.js";
import { drainConnections } from "../lib/drain-connections.js";
import type { PrimaryDataPlane } from "../shards/primary-data-plane.js";

/**
 * Node's HTTP server tracks its connections (which are idle, which overran the headers or
 * request timeout) only once it starts listening. Shoal's servers never listen themselves
 * (connections are handed to them), so the tracking is started here: without it a slow client
 * would never be cut off, and idle connections couldn't be closed at shutdown.
 */
export function startTracking(server: Server): void {
  server.emit("listening");
}

/** Requests still running this long after shutdown starts are cut off. */
export const SHUTDOWN_DEADLINE_MS = 15_000;

/** What answers once the process serves: the data plane, and the management API's listener. */
export interface Handlers {
  dataPlane: Pick<PrimaryDataPlane, "handle" | "upgrade">;
  api: (req: IncomingMessage, res: ServerResponse) => unknown;
}

/**
 * The primary process's HTTP server: the management API, and the node's own replication traffic.
 * It listens on no port itself: the node's router (src/shards/router.ts) hands it the connections
 * whose first request is for it, and its internal port the requests other processes send on. A
 * request on such a connection for a database goes to the shard owning it. Until `serve` is
 * called every request is answered 503, so the port can be bound first at start.
 */
export class ShoalServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
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
    startTracking(this.server);
  }

  /** Serves a connection handed over, with the bytes already read from it. */
  accept(socket: Socket, head: Buffer | undefined): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    this.server.emit("connection", socket);
    if (head && head.length > 0) socket.emit("data", head);
    socket.resume();
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
   * Resolves once the connections it was handed are done. Keep-alive connections that go idle
   * once their request finishes would otherwise hold the close for the keep-alive timeout; a
   * stuck request is cut after the deadline.
   */
  async close(): Promise<void> {
    await drainConnections(this.server, this.sockets, SHUTDOWN_DEADLINE_MS);
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
    if (route) this.serving.dataPlane.handle(req, res, route);
    else void this.serving.api(req, res);
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Node stops listening for the socket's errors once it emits "upgrade" (see ShardServer.upgrade).
    socket.on("error", () => socket.destroy());
    if (!this.serving) {
      socket.end("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n\r\n");
      return;
    }
    const route = routeRequest(req.headers.host, req.url ?? "/", this.dbDomain);
    if (!route) socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
    else this.serving.dataPlane.upgrade(req, socket, head, route);
  }
}
