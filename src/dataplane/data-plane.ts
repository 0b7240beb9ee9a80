import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { failpoint } from "../lib/failpoints.js";
import { clientAddressResolver } from "./client-address.js";
import { Forwarder } from "./forward/forwarder.js";
import { HranaError } from "./hrana/errors.js";
import { HttpStreams } from "./hrana/http-streams.js";
import type { LocationServices } from "./hrana/location-stream.js";
import { ResponseBytes, type ResponseLimits } from "./hrana/response-budget.js";
import type { StreamLimits, StreamServices } from "./hrana/stream.js";
import type { AfterStatementStep } from "./hrana/stream-services.js";
import { HranaHttp } from "./http.js";
import { LaggingReplicas } from "./lagging-replicas.js";
import type { DataPlaneParts } from "./parts.js";
import type { PullServices } from "./pull/pull-updates.js";
import { observeRequest } from "./request-log.js";
import type { ResolvedRoute } from "./resolved-route.js";
import type { SyncServices } from "./sync.js";
import { HranaWebSockets } from "./ws.js";

export interface DataPlaneSettings extends StreamLimits, ResponseLimits {
  /** An HTTP stream unused for this long is closed (its transaction rolled back). */
  streamIdleMs: number;
  /** See `client-address.ts`. */
  trustedProxies: readonly string[];
  /** Streams (HTTP and WebSocket) one database may have open at once. */
  maxStreamsPerDatabase: number;
  /** Streams one WebSocket connection may have open at once. */
  maxStreamsPerWebSocket: number;
  /** A SQL request's body must arrive within this long. */
  bodyTimeoutMs: number;
}

export interface DataPlane {
  /** Serves a request this node serves, or sends it on to the node its route was resolved to. */
  handle(req: IncomingMessage, res: ServerResponse, route: ResolvedRoute): Promise<void>;
  /** `turn` starts each of the socket's messages in its database's turn (see fair-turns.ts). */
  upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    route: ResolvedRoute,
    turn?: (work: () => void) => void,
  ): void;
  /** Open HTTP streams, for tests and diagnostics. */
  openStreams(): number;
  /** Pulls waiting for a change (long-poll), for tests and diagnostics. */
  pullWaiters(): number;
  close(): void;
}

/** What the log says when a step after a statement fails; the statement's answer stands. */
const AFTER_STATEMENT_FAILURES: Record<AfterStatementStep, string> = {
  usage: "a statement ran but its usage could not be counted",
  // Its followers miss this change, and applying the next one to them fails its check (recorded
  // in the audit log) instead of diverging silently.
  "schema-journal": "a schema change committed but could not be journaled for the schema's followers",
};

/** Everything that serves SQL to clients: Hrana over HTTP and WebSocket, for every database. */
export function createDataPlane(deps: DataPlaneParts, settings: DataPlaneSettings): DataPlane {
  const services: StreamServices & SyncServices & LocationServices & PullServices = {
    hosted: deps.hosted,
    observe: (dbId, location, index) => deps.replicas.observe(dbId, location, index),
    replicas: deps.replicas,
    readYourWritesMs: settings.txnTimeoutMs,
    holds: (location) => deps.placement.holds(location),
    lagging: new LaggingReplicas((dbId, location) => deps.replicas.pullNow(dbId, location), deps.log),
    ...(deps.leases ? { fence: fenceOf(deps.leases) } : {}),
    ...(deps.peers ? { peers: deps.peers } : {}),
    meter: deps.meter,
    ...(deps.disk ? { disk: deps.disk } : {}),
    limits: { txnTimeoutMs: settings.txnTimeoutMs, lockWaitMs: settings.lockWaitMs },
    // One database may never hold more than half the connections the server can open.
    maxStreamsPerDatabase: Math.max(
      1,
      Math.min(settings.maxStreamsPerDatabase, Math.floor(deps.hosted.connectionLimit / 2)),
    ),
    schemaChanged(access, conn, statements) {
      failpoint("after-commit.schema-journal");
      deps.schema.changed(access.database, conn, statements);
    },
    afterCommitFailed(step, dbId, error) {
      deps.metrics.afterCommitFailure(step);
      deps.log.error({ err: error, dbId, step }, AFTER_STATEMENT_FAILURES[step]);
    },
    async resolveAttach(access, name) {
      const d = await deps.directory.find({ orgSlug: access.database.org_slug, name });
      if (!d) return undefined;
      return { id: d.id, path: deps.files.path(d.primary_location, d.id), allowAttach: d.allow_attach === 1 };
    },
  };
  const streams = new HttpStreams(settings.streamIdleMs);
  // A request another node forwarded names its client in a signed header (see forward/proof.ts).
  const clientAddress = deps.clientProof.resolver(clientAddressResolver(settings.trustedProxies));
  const responses = new ResponseBytes({
    maxBytes: settings.maxBytes,
    maxTotalBytes: settings.maxTotalBytes,
  });
  const http = new HranaHttp(deps, streams, services, clientAddress, {
    responses,
    bodyTimeoutMs: settings.bodyTimeoutMs,
  });
  const ws = new HranaWebSockets(deps, services, clientAddress, {
    maxStreams: settings.maxStreamsPerWebSocket,
    responses,
  });
  // Requests for a database another node serves go there (forward/), as their route was resolved.
  const forward = new Forwarder(deps, clientAddress);
  return {
    handle: (req, res, route) => {
      // Forwarded requests too: the forwarding node logs and counts them with the holder's status.
      observeRequest(req, res, route, deps);
      if (route.node.here) return http.handle(req, res, route);
      forward.send(req, res, route.node);
      return Promise.resolve();
    },
    upgrade: (req, socket, head, route, turn) => {
      if (route.node.here) ws.upgrade(req, socket, head, route.locator, route.location, turn);
      else forward.upgrade(req, socket, head, route.node);
    },
    openStreams: () => streams.size,
    pullWaiters: () => deps.hosted.commitWaiters,
    close() {
      deps.hosted.stopWaits();
      ws.closeAll();
      forward.closeAll();
      streams.closeAll();
    },
  };
}

/** The write fence over this node's leases (see hosting/primary-leases.ts) and standbys (hosting/standbys.ts). */
function fenceOf(leases: NonNullable<DataPlaneParts["leases"]>): NonNullable<StreamServices["fence"]> {
  return {
    mayWrite: (database) => leases.mayWrite(database.group_id) && !leases.isolated(database.group_id),
    async acquire(database) {
      if (leases.isolated(database.group_id)) throw primaryIsolated();
      if (await leases.acquire(database.group_id)) return;
      throw new HranaError(
        "PRIMARY_NOT_LEASED",
        "this node doesn't hold the lease of this database's primary (it moved in a failover, or the store can't be reached to renew it): nothing was written",
      );
    },
    refuseIfIsolated(database) {
      if (leases.isolated(database.group_id)) throw primaryIsolated();
    },
    confirm(database, index) {
      if (!leases.confirms(database.group_id)) return undefined;
      return leases.confirm(database.group_id, database.id, index()).then((ok) => {
        if (ok) return;
        throw new HranaError(
          "WRITE_UNCONFIRMED",
          "the write committed at the primary, but a standby didn't confirm it and the store can't be reached to drop that standby: a failover may discard it; look before retrying",
        );
      });
    },
  };
}

function primaryIsolated(): HranaError {
  return new HranaError(
    "PRIMARY_ISOLATED",
    "this node can reach neither a standby of this database's group nor the store (it may be cut off while a failover happens): it serves the group again once it can; nothing was run",
  );
}
