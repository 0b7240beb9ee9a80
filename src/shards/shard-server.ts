import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { DataPlane } from "../dataplane/data-plane.js";
import { FairTurns } from "../dataplane/fair-turns.js";
import { answerFailure } from "../dataplane/http-errors.js";
import { type DataRoute, routeRequest } from "../dataplane/routing.js";
import { drainConnections } from "../lib/drain-connections.js";
import type { Logger } from "../lib/logger.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../lib/request-id.js";
import type { ShoalMetrics } from "../metrics/metrics.js";
import type { Hop } from "./hop.js";
import type { InternalPorts } from "./protocol.js";
import type { QuarantineMirror } from "./quarantine.js";
import { failUpgrade, quarantined, refuseHttp, refuseRaw, shardGone } from "./refusals.js";
import type { Resolution, Resolver } from "./resolver.js";
import type { Target } from "./router.js";
import type { SqlHop } from "./sql-hop.js";

/** Requests still running this long after a shard starts draining are cut off. */
const DRAIN_DEADLINE_MS = 15_000;

export interface ShardServerParts {
  index: number;
  count: number;
  dbDomain: string;
  headersTimeoutMs: number;
  dataPlane: Pick<DataPlane, "handle" | "upgrade">;
  resolver: Resolver;
  hop: Hop;
  /** SQL requests for another shard's databases go there this way when they can (sql-hop.ts). */
  sqlHop?: SqlHop;
  ports: InternalPorts;
  quarantine: QuarantineMirror;
  log: Logger;
  metrics: Pick<ShoalMetrics, "shardHop">;
}

/**
 * A shard's HTTP server. It listens on no port of its own: the node's primary process hands it
 * connections whose first request is for a database this shard owns (or that arrived on this
 * shard's internal port). A request on such a connection for anything else (another shard's
 * database, the management API) is sent on to the process serving it.
 */
export class ShardServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  /** HTTP requests taken in turns per database (see fair-turns.ts). */
  private readonly turns: FairTurns;

  constructor(private readonly parts: ShardServerParts) {
    this.turns = new FairTurns(undefined, (error) =>
      parts.log.error({ err: error }, "a request taken late failed"),
    );
    // As the node's own server: headers must arrive in time, slow sockets are checked every second.
    this.server = createServer(
      { headersTimeout: parts.headersTimeoutMs, connectionsCheckingInterval: 1000 },
      (req, res) => this.request(req, res),
    );
    this.server.on("upgrade", (req, socket, head: Buffer) => this.upgrade(req, socket, head));
    // Connections are tracked (headers timeout, idle ones closed) only once "listening".
    this.server.emit("listening");
  }

  /** Serves a connection handed over, with the bytes already read from it. */
  accept(socket: Socket, head: Buffer | undefined): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    this.server.emit("connection", socket);
    if (head && head.length > 0) socket.emit("data", head);
    socket.resume();
  }

  /** Lets requests in flight finish (cut after a deadline); kept-alive idle connections close. */
  async close(): Promise<void> {
    await drainConnections(this.server, this.sockets, DRAIN_DEADLINE_MS);
  }

  private portOf(t: Target): number {
    return t.kind === "primary" ? this.parts.ports.primary : this.parts.ports.shards[t.index]!;
  }

  /** Whether this shard acts on a request: it owns the database, or the request leaves the node from here. */
  private mine(r: Resolution): boolean {
    return !r.node.here || (r.process.kind === "shard" && r.process.index === this.parts.index);
  }

  /** The quarantine of the database a request names, if it is in one. */
  private quarantineOf(r: Resolution) {
    const id = r.record?.id ?? ("id" in r.locator ? r.locator.id : undefined);
    return id === undefined ? undefined : this.parts.quarantine.of(id);
  }

  private request(req: IncomingMessage, res: ServerResponse): void {
    const route = routeRequest(req.headers.host, req.url ?? "/", this.parts.dbDomain);
    if (!route) {
      this.parts.hop.http(req, res, this.parts.ports.primary);
      return;
    }
    this.resolve(req, res, route, (r) => {
      if (this.mine(r)) return this.here(req, res, r);
      const t = r.process;
      if (t.kind === "shard" && this.parts.sqlHop?.send(req, res, t.index, route.path))
        return this.parts.metrics.shardHop("sql");
      this.parts.metrics.shardHop("http");
      this.parts.hop.http(req, res, this.portOf(t));
    });
  }

  /**
   * A request another shard sent on over the SQL hop, for a database it found this shard owns.
   * Served as if it had come on a connection of this shard's own; should this shard find another
   * owner (the name was given to a new database in between), nothing runs and the client retries.
   */
  hopped(req: IncomingMessage, res: ServerResponse): void {
    const route = routeRequest(req.headers.host, req.url ?? "/", this.parts.dbDomain);
    if (!route) {
      refuseHttp(res, shardGone(this.parts.index));
      return;
    }
    this.resolve(req, res, route, (r) =>
      this.mine(r) ? this.here(req, res, r) : refuseHttp(res, shardGone(this.parts.index)),
    );
  }

  /** Resolves a request (maybe after a lookup) and goes on with it. */
  private resolve(
    req: IncomingMessage,
    res: ServerResponse,
    route: DataRoute,
    go: (r: Resolution) => void,
  ): void {
    const r = this.parts.resolver.resolve(route, req);
    // A lookup that fails (the primary process restarting) is answered, never left to end the shard.
    if (r instanceof Promise)
      r.then(go).catch((e: unknown) =>
        answerFailure(req, res, e, requestIdOf(req.headers[REQUEST_ID_HEADER]), this.parts.log),
      );
    else go(r);
  }

  /**
   * Serves a request for one of this shard's databases, in its database's turn; one for another
   * node's database is sent there at once (the data plane forwards it).
   */
  private here(req: IncomingMessage, res: ServerResponse, r: Resolution): void {
    if (!r.node.here) return void this.parts.dataPlane.handle(req, res, r);
    const q = this.quarantineOf(r);
    if (q) refuseHttp(res, quarantined(q));
    else this.turns.run(r.turn, () => void this.parts.dataPlane.handle(req, res, r));
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Node stops listening for the socket's errors once it emits "upgrade": a reset while the
    // database is looked up, or while a refusal is written, would otherwise end the process.
    // Whoever takes the socket on adds its own listeners.
    socket.on("error", () => socket.destroy());
    const route = routeRequest(req.headers.host, req.url ?? "/", this.parts.dbDomain);
    if (!route) return void socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
    const go = (r: Resolution) => {
      if (!this.mine(r)) return this.parts.hop.upgrade(req, socket, head, this.portOf(r.process));
      const q = r.node.here ? this.quarantineOf(r) : undefined;
      if (q) refuseRaw(socket, quarantined(q));
      else this.parts.dataPlane.upgrade(req, socket, head, r, (work) => this.turns.run(r.turn, work));
    };
    const r = this.parts.resolver.resolve(route, req);
    if (r instanceof Promise)
      r.then(go).catch((e: unknown) =>
        failUpgrade(socket, e, requestIdOf(req.headers[REQUEST_ID_HEADER]), this.parts.log),
      );
    else go(r);
  }
}
