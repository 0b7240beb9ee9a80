import path from "node:path";
import { fileURLToPath } from "node:url";
import { getRequestListener } from "@hono/node-server";
import { createApp } from "../api/app.js";
import type { Config } from "../config.js";
import { clientAddressResolver } from "../dataplane/client-address.js";
import { routeRequest } from "../dataplane/routing.js";
import type { LocalNode } from "../domain/cluster/local-node.js";
import { requireSharedKey } from "../domain/cluster/shared-key.js";
import { reconcileBeforeServing, reconcileWhileServing } from "../hosting/reconcile.js";
import { armFailpoints } from "../lib/failpoints.js";
import { createLogger, type Logger, shardLogLines } from "../lib/logger.js";
import { systemClock } from "../lib/time.js";
import { TlsCertificates } from "../lib/tls-certificates.js";
import type { ReplicationManager } from "../replication/manager.js";
import { Hop } from "../shards/hop.js";
import { followShards, primaryAnswers } from "../shards/primary-answers.js";
import { type PrimaryDataPlane, primaryDataPlane } from "../shards/primary-data-plane.js";
import type { RequestHead } from "../shards/request-head.js";
import { Resolver } from "../shards/resolver.js";
import { PublicRouter, type Target } from "../shards/router.js";
import { SqlHop } from "../shards/sql-hop.js";
import type { Supervisor } from "../shards/supervisor.js";
import { openPostgresStore } from "../store/postgres.js";
import { openSqliteStore } from "../store/sqlite.js";
import type { Store } from "../store/store.js";
import { prepareDataFolder } from "./data-folder.js";
import { type DataFolderLock, takeDataFolder } from "./data-folder-lock.js";
import { bootstrap } from "./first-start.js";
import { type Jobs, startJobs } from "./jobs.js";
import { listen } from "./listener.js";
import { watchShards } from "./metrics-sources.js";
import { answersHealth } from "./node-identity.js";
import { plainDoor, tlsDoor } from "./protocol-doors.js";
import { ShoalServer } from "./server.js";
import { type Parts, type Wiring, wire } from "./wiring.js";

export interface Shoal {
  /** Base URL of the HTTP server, e.g. `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  deps: Parts;
  /** The primary process's side of the data plane: replication traffic, and requests sent on to shards. */
  dataPlane: PrimaryDataPlane;
  replication: ReplicationManager;
  /** This process among the nodes sharing the store, with the locations it holds. */
  node: LocalNode;
  /** Settles when start-up reconciliation (replicas catching up, rebuilding missing ones) is done. */
  reconciled: Promise<void>;
  /** Stops accepting connections, lets requests in flight finish, then closes the store. */
  close(): Promise<void>;
  /** Reads the TLS certificate and key again (SIGHUP); false when not in use or they failed to load. */
  reloadTls(reason: string): boolean;
}

export interface StartOptions {
  log?: Logger;
  /**
   * Where the first-start banner with a generated admin token goes: stderr by default, apart
   * from the JSON log lines on stdout, so a log collector reading stdout never stores it.
   */
  announce?: (text: string) => void;
  /** The built web console; `dist/console` beside the code by default (`npm run build` writes it). */
  consoleDir?: string;
  /** Where the shards' JSON log lines go (by default where `log` writes). */
  logLines?: (line: string) => void;
}

const PRIMARY: Target = { kind: "primary" };

/** Where the public port sends each new connection: here until the node serves, then by its first request. */
class Routes {
  private decide: ((head: RequestHead) => Target | Promise<Target>) | undefined;
  supervisor: Supervisor | undefined;

  constructor(private readonly server: ShoalServer) {}

  serve(parts: Parts, dbDomain: string): void {
    const { supervisor } = parts;
    this.supervisor = supervisor;
    const resolver = new Resolver({ ...parts, count: supervisor.count });
    this.decide = (head) => {
      const route = routeRequest(head.host, head.url, dbDomain);
      return route ? resolver.process(route, head.method) : PRIMARY;
    };
  }

  readonly delivery = {
    decide: (head: RequestHead) => this.decide?.(head) ?? PRIMARY,
    deliver: (t: Target, socket: import("node:net").Socket, bytes: Buffer, tls?: boolean) => {
      if (t.kind === "shard" && this.supervisor) this.supervisor.deliver(t.index, socket, bytes, tls);
      else if (tls)
        socket.destroy(); // the router answers TLS itself for this process
      else this.server.accept(socket, bytes);
    },
  };
}

/** `<repo>/dist/console`, from both `src/start/` (tsx) and `dist/start/` (built). */
const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL("../../dist/console", import.meta.url));

/**
 * Starts one Shoal process: port -> data folder -> store -> parts -> serving. The port is bound
 * first, so a port in use stops the start before anything is written; until the node has joined
 * the nodes sharing the store and reconciled its files, every request is answered 503.
 */
export async function startShoal(config: Config, opts: StartOptions = {}): Promise<Shoal> {
  const startedAt = Date.now();
  armFailpoints(config.failpoints ?? []);
  const log = opts.log ?? createLogger(config.logLevel);
  const server = new ShoalServer(config.dbDomain, config.headersTimeoutMs);
  const routes = new Routes(server);
  const certificates = config.tls && new TlsCertificates(config.tls, log);
  const router = new PublicRouter(
    {
      headersTimeoutMs: config.headersTimeoutMs,
      ...(certificates ? tlsDoor(certificates, log) : plainDoor(log)),
    },
    routes.delivery,
  );
  await listen(router.netServer, config.host, config.port);
  let lock: DataFolderLock | undefined;
  try {
    await prepareDataFolder(config.dataDir);
    lock = takeDataFolder(config.dataDir);
    const store = config.metadataUrl
      ? await openPostgresStore(config.metadataUrl, { queryTimeoutMs: config.storeTimeoutMs })
      : await openSqliteStore(config.dataDir);
    const wiring = await wireAndBootstrap(config, opts, log, store);
    const logLines = opts.logLines ?? shardLogLines(log);
    const shoal = await serve(
      config,
      wiring,
      { server, router, routes },
      { log, startedAt, consoleDir: opts.consoleDir, logLines, tls: certificates !== undefined },
    );
    const held = lock;
    if (certificates) {
      // The shards answer the handshakes that name their databases: they load the new pair too.
      certificates.onReload = () => wiring.parts.supervisor.broadcast("tls-reload", null);
      certificates.watch();
    }
    return {
      ...shoal,
      // The folder is free again only once everything that writes to it has stopped.
      close: () =>
        shoal.close().finally(() => {
          certificates?.close();
          held.release();
        }),
      reloadTls: (reason) => certificates?.reload(reason) ?? false,
    };
  } catch (e) {
    lock?.release();
    router.close();
    await server.close();
    throw e;
  }
}

/** The parts over an open store, with the administrator made on a first start; on failure the store is closed. */
async function wireAndBootstrap(
  config: Config,
  opts: StartOptions,
  log: Logger,
  store: Store,
): Promise<Wiring> {
  try {
    const wiring = await wire(config, store, log);
    // Database tokens are signature-checked: a node with another key would refuse other nodes' tokens.
    const keyFile = path.join(config.dataDir, "keys", "db-tokens.jwk");
    await requireSharedKey(store, systemClock, "db-tokens", wiring.parts.dbTokenKey, keyFile);
    await bootstrap(config, wiring.parts, opts.announce ?? ((t) => process.stderr.write(t)));
    return wiring;
  } catch (e) {
    await store.close();
    throw e;
  }
}

/** The shards: started, told what they follow, and what the primary process does with their requests. */
async function startShards(
  config: Config,
  parts: Parts,
  server: ShoalServer,
  logLines: ((l: string) => void) | undefined,
) {
  const { supervisor } = parts;
  followShards(supervisor, parts);
  parts.placement.onChange((held) => supervisor.broadcast("placement", { held: [...held] }));
  parts.leases.onChange((views) => supervisor.broadcast("leases", views));
  parts.directory.onInvalidate(() => supervisor.broadcast("invalidate", null));
  await supervisor.start({
    acceptPrimary: (socket, head) => server.accept(socket, head),
    answers: primaryAnswers(parts),
    logLines,
    restarted: (index) => supervisor.shards[index]?.emit("leases", parts.leases.views()),
    ended: (_index, how) => parts.metrics.shardEnded(how),
  });
  watchShards(parts.metrics, supervisor);
  const clientAddress = parts.clientProof.resolver(clientAddressResolver(config.trustedProxies));
  const hop = new Hop(parts.placement.nodeId, parts.clientProof, clientAddress);
  const hopDir = supervisor.sqlHopDir;
  return primaryDataPlane(parts, hop, {
    count: supervisor.count,
    ports: () => supervisor.internalPorts,
    clientAddress,
    sqlHop: hopDir ? new SqlHop(hopDir, config.bodyTimeoutMs, parts.log) : undefined,
  });
}

/** Joins the nodes, reconciles, then serves; on failure everything started here stops again. */
async function serve(
  config: Config,
  { parts, setSourceUrl }: Wiring,
  { server, router, routes }: { server: ShoalServer; router: PublicRouter; routes: Routes },
  at: {
    log: Logger;
    startedAt: number;
    consoleDir: string | undefined;
    logLines: ((l: string) => void) | undefined;
    /** The public port speaks TLS. */
    tls: boolean;
  },
): Promise<Omit<Shoal, "reloadTls">> {
  const api = createApp(parts, {
    rateLimit: { limit: config.rateLimit, windowSeconds: config.rateLimitWindowSeconds },
    consoleDir: at.consoleDir ?? DEFAULT_CONSOLE_DIR,
    metricsToken: config.metricsToken,
    trustedProxies: config.trustedProxies,
  });
  let dataPlane: PrimaryDataPlane;
  try {
    dataPlane = await startShards(config, parts, server, at.logLines);
  } catch (e) {
    await parts.supervisor.stop();
    await parts.store.close();
    throw e;
  }
  const jobs = startJobs(config, parts);
  const { url, port, nodeUrl, sourceUrl } = addresses(
    config,
    router,
    at.tls,
    parts.supervisor.internalPorts.primary,
  );
  setSourceUrl(sourceUrl);
  server.servePulls((req, res, dbId, path) => parts.relay.handle(req, res, dbId, path));
  const node = parts.placement;
  let pending: Awaited<ReturnType<typeof reconcileBeforeServing>>;
  try {
    // Locations this node offers: the catalogue's, and any it has files for from earlier runs.
    // (SHOAL_NODE_LOCATIONS narrows the catalogue, so each machine of a layout holds its own.)
    const catalogue = config.nodeLocations ?? config.locations.map((l) => l.code);
    const offered = [...new Set([...catalogue, ...parts.files.locations()])];
    await node.join(nodeUrl, config.version, offered, answersHealth);
    // A primary that failed over while this node was down comes back as a replica, never a primary;
    // the leases of the primaries it still serves are taken before any write is accepted.
    await parts.failover.demoteFormerPrimaries([...node.locations]);
    await parts.leases.start();
    // Before serving: existing replicas go to their location's worker, orphans are swept. Only the
    // locations this node holds are reconciled; the others are their holders' to check.
    pending = await reconcileBeforeServing(parts, { holds: (l) => node.holds(l), startedAt: at.startedAt });
  } catch (e) {
    dataPlane.close();
    await jobs.stop();
    await parts.backups?.stop();
    await parts.leases.stop();
    await parts.replicas.close();
    await parts.supervisor.stop();
    await node.leave();
    await parts.store.close();
    throw e;
  }
  server.serve({ dataPlane, api: getRequestListener(api.fetch) });
  routes.serve(parts, config.dbDomain);
  // Shipping starts once the node knows the locations it holds; without SHOAL_BACKUP_URL, nothing.
  await parts.backups?.start();
  // Once serving: replicas catch up, and a missing one is rebuilt by syncing from this very server.
  const reconciled = reconcileWhileServing(parts, pending)
    // Children of schema databases that missed changes before a stop get them now.
    .then(() => parts.schema.resume())
    .then(
      () => undefined,
      (e: unknown) => at.log.error({ err: e }, "reconciling instance files failed"),
    );
  at.log.info({ url, dataDir: config.dataDir, version: config.version }, "shoal is ready");
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= shutdown({ router, server, dataPlane }, reconciled, parts, jobs));
  return { url, port, deps: parts, dataPlane, replication: parts.replicas, node, reconciled, close };
}

/**
 * The node's addresses: the URL it announces, the one other nodes reach it at (unless
 * SHOAL_NODE_URL says), and the one its replicas sync from: its own port, where a wildcard listen
 * address is reached on loopback; behind TLS, whose certificate names the public host and not the
 * loopback, this process's internal port instead.
 */
function addresses(config: Config, router: PublicRouter, tls: boolean, internalPort: number) {
  const port = (router.netServer.address() as import("node:net").AddressInfo).port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const scheme = tls ? "https" : "http";
  const reachable = config.host === "0.0.0.0" ? "127.0.0.1" : config.host === "::" ? "[::1]" : host;
  return {
    port,
    url: `${scheme}://${host}:${port}`,
    nodeUrl: config.nodeUrl ?? `${scheme}://${reachable}:${port}`,
    sourceUrl: tls ? `http://127.0.0.1:${internalPort}` : `http://${reachable}:${port}`,
  };
}

/**
 * Stops in order: no new connections (the data plane's streams and sockets end at once), requests
 * in flight finish, here and in every shard, start-up reconciliation settles; then the timers
 * (with a last usage flush, collected from the shards), backup shipping (with a last pass in each
 * shard), replicas, the shards themselves (their connections and keys), this node's record and the store.
 */
async function shutdown(
  front: { router: PublicRouter; server: ShoalServer; dataPlane: PrimaryDataPlane },
  reconciled: Promise<void>,
  parts: Parts,
  jobs: Jobs,
): Promise<void> {
  front.router.close();
  const drained = Promise.all([front.server.close(), parts.supervisor.drain()]);
  front.dataPlane.close();
  await drained;
  await reconciled;
  await jobs.stop();
  // One last pass ships what was committed before the server stopped taking requests.
  await parts.backups?.stop();
  await parts.leases.stop();
  // A pull still waiting on another node's primary would hold its worker's shutdown.
  parts.relay.close();
  await parts.replicas.close();
  await parts.supervisor.stop();
  await parts.placement.leave();
  await parts.store.close();
}
