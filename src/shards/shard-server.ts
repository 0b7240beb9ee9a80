import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { DataPlane } from "../dataplane/data-plane.js";
import { FairTurns } from "../dataplane/fair-turns.js";
import { answerFailure } from "../dataplane/http-errors.js";
import { type DataRoute, routeRequest } from "../dataplane/routing.js";
import type { DatabaseLookup } from "../domain/data-access/ports.js";
import { drainConnections } from "../lib/drain-connections.js";
import type { Logger } from "../lib/logger.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../lib/request-id.js";
import type { ShoalMetrics } from "../metrics/metrics.js";
import type { Hop } from "./hop.js";
import type { InternalPorts } from "./protocol.js";
import type { QuarantineMirror } from "./quarantine.js";
import { failUpgrade, quarantined, refuseHttp, refuseRaw, shardGone } from "./refusals.js";
import type { Target } from "./router.js";
import type { SqlHop } from "./sql-hop.js";
import { targetOf } from "./targets.js";

/** Requests still running this long after a shard starts draining are cut off. */
const DRAIN_DEADLINE_MS = 15_000;

export interface ShardServerParts {
  index: number;
  count: number;
  dbDomain: string;
  headersTimeoutMs: number;
  dataPlane: Pick<DataPlane, "handle" | "upgrade">;
  directory: Pick<DatabaseLookup, "peek" | "find">;
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

  private mine(t: Target): boolean {
    return t.kind === "shard" && t.index === this.parts.index;
  }

  /** The id of the database a request names, when known (its record is cached by now). */
  private idOf(route: DataRoute): string | undefined {
    const l = route.locator;
    return "id" in l ? l.id : this.parts.directory.peek(l)?.id;
  }

  /** The quarantine of the database a request names, if it is in one. */
  private quarantineOf(route: DataRoute) {
    const id = this.idOf(route);
    return id === undefined ? undefined : this.parts.quarantine.of(id);
  }

  /** Whose turn a request waits for: its database, or what names it while its id is unknown. */
  private turnKey(route: DataRoute): string {
    const l = route.locator;
    if ("label" in l) return this.idOf(route) ?? `label:${l.label}`;
    return this.idOf(route) ?? ("name" in l ? `name:${l.orgSlug}/${l.name}` : "");
  }

  private request(req: IncomingMessage, res: ServerResponse): void {
    const route = routeRequest(req.headers.host, req.url ?? "/", this.parts.dbDomain);
    if (!route) {
      this.parts.hop.http(req, res, this.parts.ports.primary);
      return;
    }
    this.decide(req, res, route, (t) => {
      if (this.mine(t)) return this.here(req, res, route);
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
    this.decide(req, res, route, (t) =>
      this.mine(t) ? this.here(req, res, route) : refuseHttp(res, shardGone(this.parts.index)),
    );
  }

  /** Finds the process serving `route` (maybe after a lookup) and goes on with it. */
  private decide(req: IncomingMessage, res: ServerResponse, route: DataRoute, go: (t: Target) => void): void {
    const t = targetOf(route, this.parts.directory, this.parts.count, req.method);
    // A lookup that fails (the primary process restarting) is answered, never left to end the shard.
    if (t instanceof Promise)
      t.then(go).catch((e: unknown) =>
        answerFailure(req, res, e, requestIdOf(req.headers[REQUEST_ID_HEADER]), this.parts.log),
      );
    else go(t);
  }

  /** Serves a request for one of this shard's databases, in its database's turn. */
  private here(req: IncomingMessage, res: ServerResponse, route: DataRoute): void {
    const q = this.quarantineOf(route);
    if (q) refuseHttp(res, quarantined(q));
    else this.turns.run(this.turnKey(route), () => void this.parts.dataPlane.handle(req, res, route));
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const route = routeRequest(req.headers.host, req.url ?? "/", this.parts.dbDomain);
    if (!route) return void socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
    const go = (t: Target) => {
      const q = this.mine(t) ? this.quarantineOf(route) : undefined;
      if (!this.mine(t)) this.parts.hop.upgrade(req, socket, head, this.portOf(t));
      else if (q) refuseRaw(socket, quarantined(q));
      else {
        const key = this.turnKey(route);
        this.parts.dataPlane.upgrade(req, socket, head, route, (work) => this.turns.run(key, work));
      }
    };
    const t = targetOf(route, this.parts.directory, this.parts.count);
    if (t instanceof Promise)
      t.then(go).catch((e: unknown) =>
        failUpgrade(socket, e, requestIdOf(req.headers[REQUEST_ID_HEADER]), this.parts.log),
      );
    else go(t);
  }
}
