import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { NodeAddress } from "../../domain/cluster/holders.js";
import type { Placement } from "../../domain/core/ports.js";
import type { DatabaseLookup, DataPlaneDatabase } from "../../domain/data-access/ports.js";
import type { Logger } from "../../lib/logger.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../../lib/request-id.js";
import type { ClientAddress } from "../client-address.js";
import type { DataRoute } from "../routing.js";
import type { ForwardingMarks } from "./headers.js";
import { proxyHttp, refuse } from "./http-proxy.js";
import { forwardRefusals, type Refusal } from "./messages.js";
import { type ClientProof, FORWARDED_BY } from "./proof.js";
import { refuseUpgrade, WebSocketProxy } from "./ws-proxy.js";

/** Which node holds a location (`domain/cluster/holders.ts`), cached. */
export interface HolderLookup {
  of(location: string): NodeAddress | undefined | Promise<NodeAddress | undefined>;
}

/** What forwarding reaches: where databases live, who holds what, and the node-to-node proof. */
export interface ForwardingParts {
  directory: Pick<DatabaseLookup, "peek" | "find">;
  placement: Placement;
  holders: HolderLookup;
  clientProof: ClientProof;
  log: Logger;
}

type Decision =
  | { here: true }
  | { here: false; holder: NodeAddress; database: string }
  | { here: false; refusal: Refusal };

const HERE: Decision = { here: true };

/**
 * The data plane's one routing decision: a request for a database whose location this node
 * holds is served here; one for a database another node holds is sent on to that node (HTTP
 * streamed both ways, WebSocket piped message by message), so any node answers any database.
 * The holder decides access with the client's own token as always: forwarding only routes.
 * A request another node already forwarded is never forwarded again (421).
 */
export class Forwarder {
  private readonly sockets = new WebSocketProxy();

  constructor(
    private readonly parts: ForwardingParts,
    private readonly clientAddress: ClientAddress,
  ) {}

  handle(
    req: IncomingMessage,
    res: ServerResponse,
    route: DataRoute,
    local: () => Promise<void>,
  ): Promise<void> {
    const decided = this.decide(route, req);
    if (!(decided instanceof Promise)) return this.act(decided, req, res, local);
    return decided.then((d) => this.act(d, req, res, local));
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, route: DataRoute, local: () => void): void {
    const go = (d: Decision) => {
      if (d.here) return local();
      const marks = this.marks(req);
      if ("refusal" in d) return refuseUpgrade(socket, d.refusal, marks.requestId);
      try {
        this.sockets.upgrade(req, socket, head, d, marks);
      } catch (e) {
        // A holder address the URL parser refuses, say: nothing was sent.
        refuseUpgrade(socket, forwardRefusals.unreachable(d.database, d.holder, String(e)), marks.requestId);
      }
    };
    const decided = this.decide(route, req);
    if (decided instanceof Promise)
      decided.then(go).catch((e: unknown) => {
        this.parts.log.error({ err: e }, "websocket upgrade failed");
        socket.destroy();
      });
    else go(decided);
  }

  closeAll(): void {
    this.sockets.closeAll();
  }

  private act(
    d: Decision,
    req: IncomingMessage,
    res: ServerResponse,
    local: () => Promise<void>,
  ): Promise<void> {
    if (d.here) return local();
    const marks = this.marks(req);
    if ("refusal" in d) refuse(res, d.refusal, marks.requestId);
    else {
      try {
        proxyHttp(req, res, d, marks);
      } catch (e) {
        refuse(res, forwardRefusals.unreachable(d.database, d.holder, String(e)), marks.requestId);
      }
    }
    return Promise.resolve();
  }

  private marks(req: IncomingMessage): ForwardingMarks {
    const peer = this.clientAddress(req);
    const self = this.parts.placement.nodeId;
    const requestId = requestIdOf(req.headers[REQUEST_ID_HEADER]);
    return { self, peer, requestId, proof: this.parts.clientProof.sign(peer, self) };
  }

  /** Synchronous when the database's record and its holder are cached (the common case). */
  private decide(route: DataRoute, req: IncomingMessage): Decision | Promise<Decision> {
    // `/replication/<id>/...`: node-to-node traffic (a replica's sync, a "pull now" notice) that
    // Shoal itself addresses to the node it means; never sent on.
    if ("id" in route.locator) return HERE;
    const cached = this.parts.directory.peek(route.locator);
    if (cached) return this.placed(cached, route, req);
    // A database that can't be looked up is the local data plane's to answer (404, 503).
    return this.parts.directory.find(route.locator).then(
      (d) => (d ? this.placed(d, route, req) : HERE),
      () => HERE,
    );
  }

  private placed(d: DataPlaneDatabase, route: DataRoute, req: IncomingMessage): Decision | Promise<Decision> {
    // Another node sending on its location's writes (hrana/remote-primary-stream.ts) wants the
    // primary: this node serves them when it holds it, instead of sending them back to the sender.
    if (typeof req.headers[FORWARDED_BY] === "string" && this.parts.placement.holds(d.primary_location))
      return HERE;
    // The instance asked for (a location of the group), else the primary: its holder serves it.
    const location =
      route.location && d.locations.includes(route.location) ? route.location : d.primary_location;
    if (this.parts.placement.holds(location)) return HERE;
    const holder = this.parts.holders.of(location);
    const choose = (h: NodeAddress | undefined): Decision => {
      if (!h) return { here: false, refusal: forwardRefusals.unheld(d.name, location) };
      // The store says this node holds it but this node gave it up (its record was taken over):
      // the local data plane refuses with 421 rather than serve a file it may no longer own.
      if (h.id === this.parts.placement.nodeId) return HERE;
      const from = req.headers[FORWARDED_BY];
      if (typeof from === "string") {
        // The header may come from anyone: only a node id is repeated in the answer.
        const sender = /^[a-z0-9-]{1,64}$/.test(from) ? from : "(unnamed)";
        return { here: false, refusal: forwardRefusals.secondHop(d.name, h, sender) };
      }
      return { here: false, holder: h, database: d.name };
    };
    if (!(holder instanceof Promise)) return choose(holder);
    return holder.then(choose, (e: unknown) => {
      this.parts.log.warn({ err: e, location }, "could not look up which node holds a location");
      return HERE;
    });
  }
}
