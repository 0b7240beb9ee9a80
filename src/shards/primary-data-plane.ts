import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { ClientAddress } from "../dataplane/client-address.js";
import { Forwarder } from "../dataplane/forward/forwarder.js";
import type { HolderLookup } from "../dataplane/forward/node-choice.js";
import type { ClientProof } from "../dataplane/forward/proof.js";
import type { PullRelay } from "../dataplane/forward/pull-relay.js";
import { answerFailure } from "../dataplane/http-errors.js";
import type { DataPlanePeers } from "../dataplane/replica-notify.js";
import { notifyReplica } from "../dataplane/replica-notify.js";
import { observeRequest } from "../dataplane/request-log.js";
import type { DataRoute } from "../dataplane/routing.js";
import type { Placement, ReplicaPort } from "../domain/core/ports.js";
import type { DatabaseLookup } from "../domain/data-access/ports.js";
import type { Logger } from "../lib/logger.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../lib/request-id.js";
import type { ShoalMetrics } from "../metrics/metrics.js";
import type { Hop } from "./hop.js";
import type { InternalPorts } from "./protocol.js";
import { failUpgrade } from "./refusals.js";
import { type Resolution, Resolver, servedByPrimary } from "./resolver.js";
import type { SqlHop } from "./sql-hop.js";

export interface PrimaryDataPlaneParts {
  directory: DatabaseLookup;
  placement: Placement;
  holders: HolderLookup;
  clientProof: ClientProof;
  replicas: ReplicaPort;
  peers: DataPlanePeers;
  relay: Pick<PullRelay, "handle">;
  log: Logger;
  metrics: Pick<ShoalMetrics, "dataRequest" | "shardHop">;
}

/** What the node's primary process does with a data-plane request. */
export interface PrimaryDataPlane {
  handle(req: IncomingMessage, res: ServerResponse, route: DataRoute): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, route: DataRoute): void;
  close(): void;
}

/**
 * The data plane as the node's primary process serves it: the node's own replication traffic
 * (another node's "pull now" notices, and this node's replicas pulling through the relay) here,
 * every request about another node's database sent there, and the rest to the shard owning it.
 * Requests reach this process only on connections whose first request was for it (the
 * management API, say).
 */
export function primaryDataPlane(
  parts: PrimaryDataPlaneParts,
  hop: Hop,
  shards: {
    count: number;
    ports: () => InternalPorts;
    clientAddress: ClientAddress;
    /** SQL requests go to their shard over the SQL hop when they can, as between shards. */
    sqlHop?: SqlHop;
  },
): PrimaryDataPlane {
  const portOf = (index: number) => shards.ports().shards[index]!;
  const resolver = new Resolver({ ...parts, count: shards.count });
  const forward = new Forwarder(parts, shards.clientAddress);
  // A failure here (a peer hanging up mid-body, the store out of reach) is answered like any other
  // data-plane failure; left to reject, it would end the whole node.
  const failed = (req: IncomingMessage, res: ServerResponse) => (e: unknown) =>
    answerFailure(req, res, e, requestIdOf(req.headers[REQUEST_ID_HEADER]), parts.log);
  const sendOn = (req: IncomingMessage, res: ServerResponse, path: string) => (r: Resolution) => {
    if (r.node.here) {
      // Only node-to-node replication traffic resolves to this process, and it never gets here.
      if (r.process.kind === "shard") {
        parts.metrics.shardHop("main");
        const index = r.process.index;
        if (!shards.sqlHop?.send(req, res, index, path)) hop.http(req, res, portOf(index));
      } else failed(req, res)(new Error("a request resolved to the primary process reached its shard hop"));
      return;
    }
    observeRequest(req, res, r, parts);
    forward.send(req, res, r.node);
  };
  return {
    handle(req, res, route) {
      if (!servedByPrimary(route, req.method)) {
        const r = resolver.resolve(route, req);
        if (r instanceof Promise) r.then(sendOn(req, res, route.path)).catch(failed(req, res));
        else sendOn(req, res, route.path)(r);
        return;
      }
      observeRequest(req, res, route, parts);
      const id = (route.locator as { id: string }).id;
      const served =
        route.path === "/notify"
          ? notifyReplica(req, res, id, parts)
          : parts.relay.handle(req, res, id, route.path);
      served.catch(failed(req, res));
    },
    upgrade(req, socket, head, route) {
      const go = (r: Resolution) => {
        if (!r.node.here) forward.upgrade(req, socket, head, r.node);
        else if (r.process.kind === "shard") {
          parts.metrics.shardHop("main");
          hop.upgrade(req, socket, head, portOf(r.process.index));
        } else socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
      };
      const r = resolver.resolve(route, req);
      if (r instanceof Promise)
        r.then(go).catch((e: unknown) =>
          failUpgrade(socket, e, requestIdOf(req.headers[REQUEST_ID_HEADER]), parts.log),
        );
      else go(r);
    },
    close() {
      hop.closeAll();
      forward.closeAll();
      // Answers still awaited over the SQL hop come in first (see SqlHop.close).
      void shards.sqlHop?.close();
    },
  };
}
