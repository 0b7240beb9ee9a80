import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { getRequestListener } from "@hono/node-server";
import { createApp } from "./api/app.js";
import { type Config, loadConfig } from "./config.js";
import { createDataPlane, type DataPlane } from "./dataplane/data-plane.js";
import { routeRequest } from "./dataplane/routing.js";
import { QuotaJudge } from "./domain/blocking.js";
import type { Deps } from "./domain/context.js";
import { type LocalNode, requireSharedKey } from "./domain/nodes.js";
import { type PendingReconcile, reconcileBeforeServing, reconcileWhileServing } from "./domain/reconcile.js";
import { resumeSchemaPropagation } from "./domain/schema-databases.js";
import { StartError } from "./errors.js";
import { createLogger, type Logger } from "./lib/logger.js";
import { systemClock } from "./lib/time.js";
import type { ReplicationManager } from "./replication/manager.js";
import { parseArguments, usage } from "./start/command-line.js";
import { prepareDataFolder } from "./start/data-folder.js";
import { type Wired, wireDeps } from "./start/deps.js";
import { bootstrap } from "./start/first-start.js";
import { listen } from "./start/listener.js";
import { answersHealth } from "./start/node-identity.js";
import { openPostgresStore } from "./store/postgres.js";
import { openSqliteStore } from "./store/sqlite.js";
import type { Store } from "./store/store.js";

/** Requests still running this long after shutdown starts are cut off. */
const SHUTDOWN_DEADLINE_MS = 15_000;

export interface Shoal {
  /** Base URL of the HTTP server, e.g. `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  deps: Deps;
  dataPlane: DataPlane;
  replication: ReplicationManager;
  /** This process among the nodes sharing the store, with the locations it holds. */
  node: LocalNode;
  /** Settles when start-up reconciliation (replicas catching up, rebuilding missing ones) is done. */
  reconciled: Promise<void>;
  /** Stops accepting connections, lets requests in flight finish, then closes the store. */
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  /** Where the first-start banner with a generated admin token goes (stdout by default). */
  announce?: (text: string) => void;
  /** The built web console; `dist/console` beside the code by default (`npm run build` writes it). */
  consoleDir?: string;
}

/** `<repo>/dist/console`, from both `src/main.ts` (tsx) and `dist/main.js` (built). */
const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL("../dist/console", import.meta.url));

type Handlers = Pick<DataPlane, "handle" | "upgrade"> & { api: ReturnType<typeof getRequestListener> };

/**
 * The composition root: port -> data folder -> store -> domain -> serving. The port is bound
 * first, so a port in use stops the start before anything is written; until the node has joined
 * the nodes sharing the store and reconciled its files, every request is answered 503.
 */
export async function startShoal(config: Config, opts: StartOptions = {}): Promise<Shoal> {
  const startedAt = Date.now();
  const log = opts.log ?? createLogger(config.logLevel);
  let serving: Handlers | undefined;
  // Slow clients cost only their socket: headers must arrive in time, and idle or slow sockets are
  // checked every second rather than Node's thirty (SQL bodies have their own limit, see http-io.ts).
  const server = createServer(
    { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    (req, res) => {
      if (!serving) {
        res.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
        res.end(JSON.stringify({ error: "shoal is starting; retry in a moment" }));
        return;
      }
      // A request whose Host or path names a database goes to the data plane (on node's own request
      // objects: it is the hot path), everything else to the management API.
      const route = routeRequest(req.headers.host, req.url ?? "/", config.dbDomain);
      if (route) void serving.handle(req, res, route);
      else void serving.api(req, res);
    },
  );
  server.on("upgrade", (req, socket, head: Buffer) => {
    if (!serving) {
      socket.end("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n\r\n");
      return;
    }
    const route = routeRequest(req.headers.host, req.url ?? "/", config.dbDomain);
    if (!route) socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
    else serving.upgrade(req, socket, head, route);
  });
  await listen(server, config.host, config.port);
  try {
    await prepareDataFolder(config.dataDir);
    const store = config.metadataUrl
      ? await openPostgresStore(config.metadataUrl)
      : await openSqliteStore(config.dataDir);
    const wired = await wireAndBootstrap(config, opts, log, store);
    const consoleDir = opts.consoleDir ?? DEFAULT_CONSOLE_DIR;
    return await serveOn(config, log, wired, server, startedAt, consoleDir, (h) => {
      serving = h;
    });
  } catch (e) {
    await closeServer(server);
    throw e;
  }
}

/** The domain over an open store, with the administrator made on a first start; on failure the store is closed. */
async function wireAndBootstrap(
  config: Config,
  opts: StartOptions,
  log: Logger,
  store: Store,
): Promise<Wired> {
  try {
    const wired = await wireDeps(config, store, log);
    // Database tokens are signature-checked: a node with another key would refuse other nodes' tokens.
    const keyFile = path.join(config.dataDir, "keys", "db-tokens.jwk");
    await requireSharedKey(store, systemClock, "db-tokens", wired.deps.dbTokenKey, keyFile);
    await bootstrap(config, wired.deps, opts.announce ?? ((t) => process.stdout.write(t)));
    return wired;
  } catch (e) {
    await store.close();
    throw e;
  }
}

/** Joins the nodes, reconciles, then serves; on failure everything started here stops again. */
async function serveOn(
  config: Config,
  log: Logger,
  wired: Wired,
  server: Server,
  startedAt: number,
  consoleDir: string,
  serve: (h: Handlers) => void,
): Promise<Shoal> {
  const { deps, replication, node } = wired;
  const api = createApp(deps, {
    rateLimit: { limit: config.rateLimit, windowSeconds: config.rateLimitWindowSeconds },
    consoleDir,
  });
  const dataPlane = createDataPlane(deps, {
    txnTimeoutMs: config.transactionTimeoutMs,
    lockWaitMs: config.transactionTimeoutMs,
    streamIdleMs: config.streamIdleTimeoutMs,
    trustedProxies: config.trustedProxies,
    maxBytes: config.maxResponseBytes,
    maxTotalBytes: config.maxTotalResponseBytes,
    maxStreamsPerDatabase: config.maxStreamsPerDatabase,
    maxStreamsPerWebSocket: config.maxStreamsPerWebSocket,
    bodyTimeoutMs: config.bodyTimeoutMs,
  });
  const background = startBackgroundWork(config, deps);
  const port = (server.address() as AddressInfo).port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  // Replicas sync from this node's own address; a wildcard listen address is reached on loopback.
  const reachable = config.host === "0.0.0.0" ? "127.0.0.1" : config.host === "::" ? "[::1]" : host;
  wired.setSourceUrl(`http://${reachable}:${port}`);
  let pending: PendingReconcile;
  try {
    // Locations this node offers: the catalogue's, and any it has files for from earlier runs.
    const offered = [...new Set([...config.locations.map((l) => l.code), ...deps.files.locations()])];
    await node.join(config.nodeUrl ?? `http://${reachable}:${port}`, config.version, offered, answersHealth);
    // Before serving: existing replicas go to their location's worker, orphans are swept. Only the
    // locations this node holds are reconciled; the others are their holders' to check.
    pending = await reconcileBeforeServing(deps, { holds: (l) => node.holds(l), startedAt });
  } catch (e) {
    dataPlane.close();
    await background.stop();
    await replication.close();
    await node.leave();
    await deps.store.close();
    throw e;
  }
  serve({
    handle: dataPlane.handle.bind(dataPlane),
    upgrade: dataPlane.upgrade.bind(dataPlane),
    api: getRequestListener(api.fetch),
  });
  // Once serving: replicas catch up, and a missing one is rebuilt by syncing from this very server.
  const reconciled = reconcileWhileServing(deps, pending)
    // Children of schema databases that missed changes before a stop get them now.
    .then(() => resumeSchemaPropagation(deps))
    .then(
      () => undefined,
      (e: unknown) => log.error({ err: e }, "reconciling instance files failed"),
    );
  const url = `http://${host}:${port}`;
  log.info({ url, dataDir: config.dataDir, version: config.version }, "shoal is ready");
  let closing: Promise<void> | undefined;
  const close = async () => {
    const drained = closeServer(server);
    dataPlane.close();
    await drained;
    await reconciled;
    await background.stop();
    await replication.close();
    await deps.pool.closeAll();
    await node.leave();
    await deps.store.close();
  };
  return { url, port, deps, dataPlane, replication, node, reconciled, close: () => (closing ??= close()) };
}

/** Usage flushes with the quota checks after them, and the pruning of old history and dumps. */
function startBackgroundWork(config: Config, deps: Deps): { stop(): Promise<void> } {
  // Plan quotas are judged after every flush of the usage counts; blocked organizations without
  // new usage are looked at again every ten flushes.
  const quotas = new QuotaJudge(deps, 10 * config.usageFlushIntervalMs);
  deps.meter.afterFlush((orgIds) => quotas.afterFlush(orgIds));
  deps.meter.start(config.usageFlushIntervalMs);
  const pruning = setInterval(() => {
    deps.frameLogs.prune(Date.now() - config.historyRetentionHours * 3_600_000);
    deps.dumps.sweep();
  }, 10 * 60_000);
  pruning.unref();
  return {
    async stop() {
      clearInterval(pruning);
      await deps.meter.stop();
    },
  };
}

/**
 * Stops accepting connections and resolves once the open ones are done. Keep-alive connections
 * that go idle once their request finishes would otherwise hold the close for the keep-alive
 * timeout; a stuck request is cut after the deadline.
 */
async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  const drained = new Promise<void>((resolve) => server.close(() => resolve()));
  const sweep = setInterval(() => server.closeIdleConnections(), 25);
  const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_DEADLINE_MS);
  server.closeIdleConnections();
  await drained;
  clearInterval(sweep);
  clearTimeout(deadline);
}

async function readVersion(): Promise<string> {
  const pkg = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "package.json");
  return (JSON.parse(await readFile(pkg, "utf8")) as { version: string }).version;
}

/**
 * Runs Shoal as a command: `--help` and `--version` print and exit, touching nothing; otherwise
 * it starts with the settings in the environment and runs until SIGTERM or SIGINT. A start that
 * fails for a known reason prints one line and exits 1 or 2 (see `StartError`); anything else
 * prints its stack and exits 1. Resolves once the server is up.
 */
export async function runFromCommandLine(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const fail = (message: string, code: number): never => {
    process.stderr.write(`shoal: ${message}\n`);
    process.exit(code);
  };
  const action = parseArguments(argv);
  const version = await readVersion();
  if (action.kind === "bad") return fail(action.message, 2);
  if (action.kind === "help") return void process.stdout.write(usage(version));
  if (action.kind === "version") return void process.stdout.write(`shoal ${version}\n`);
  let config: Config;
  try {
    config = loadConfig(process.env, version);
  } catch (e) {
    return fail(e instanceof Error ? e.message : String(e), 2);
  }
  // Every file and folder Shoal makes is its own alone: databases, their WAL and SHM, keys, logs.
  process.umask(0o077);
  const log = createLogger(config.logLevel);
  let shoal: Shoal;
  try {
    shoal = await startShoal(config, { log });
  } catch (e) {
    if (e instanceof StartError) return fail(e.message, e.exitCode);
    return fail(`failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`, 1);
  }
  const stop = (signal: string) => {
    log.info({ signal }, "shutting down");
    // A second signal while draining means "now".
    process.once(signal, () => process.exit(1));
    shoal.close().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: e }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runFromCommandLine().catch((e: unknown) => {
    process.stderr.write(`shoal: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
