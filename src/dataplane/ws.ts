import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { DatabaseLocator } from "../domain/data-access/ports.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../lib/request-id.js";
import type { ClientAddress } from "./client-address.js";
import type { LocationServices } from "./hrana/location-stream.js";
import type { StreamServices } from "./hrana/stream.js";
import { keyHeader } from "./key-header.js";
import type { DataPlaneParts } from "./parts.js";
import { observeSocket } from "./request-log.js";
import { HranaWsConnection, type WebSocketLimits } from "./ws-connection.js";

const SUBPROTOCOLS = ["hrana3", "hrana2", "hrana1"];

/**
 * Hrana over WebSocket. Upgrades arrive on the same port as HTTP, routed to a database the same
 * way (hostname or `/db/<org>/<db>` path); the client authenticates with `hello`.
 */
export class HranaWebSockets {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: 16 * 1024 * 1024,
    handleProtocols: (offered) => SUBPROTOCOLS.find((p) => offered.has(p)) ?? false,
  });
  private readonly connections = new Set<HranaWsConnection>();
  /** The request id of each upgrade in progress, for its 101 answer. */
  private readonly requestIds = new WeakMap<IncomingMessage, string>();

  constructor(
    private readonly deps: DataPlaneParts,
    private readonly services: StreamServices & LocationServices,
    private readonly clientAddress: ClientAddress,
    private readonly limits: WebSocketLimits,
  ) {
    this.wss.on("headers", (headers, req) => {
      const id = this.requestIds.get(req);
      if (id !== undefined) headers.push(`${REQUEST_ID_HEADER}: ${id}`);
    });
  }

  upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    locator: DatabaseLocator,
    location?: string,
    turn?: WebSocketLimits["turn"],
  ): void {
    // One id for the connection's whole life: its log lines and internal errors carry it.
    const requestId = requestIdOf(req.headers[REQUEST_ID_HEADER]);
    this.requestIds.set(req, requestId);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const log = this.deps.log.child({ requestId });
      // A frame the protocol forbids (a reserved opcode, an unmasked frame, a payload past
      // maxPayload, text that isn't UTF-8) or a socket error: ws closes the connection and emits
      // "error", which, unheard, would end the process and every database it serves.
      ws.on("error", (err) => log.debug({ err }, "websocket closed on a protocol or socket error"));
      const conn = new HranaWsConnection(
        ws,
        locator,
        location,
        this.clientAddress(req),
        { ...this.deps, log },
        this.services,
        requestId,
        keyHeader(req),
        turn ? { ...this.limits, turn } : this.limits,
      );
      this.connections.add(conn);
      observeSocket({ ...this.deps, log }, req, ws);
      ws.once("close", () => {
        conn.closeStreams();
        this.connections.delete(conn);
      });
    });
  }

  closeAll(): void {
    for (const c of this.connections) c.shutdown();
  }
}
