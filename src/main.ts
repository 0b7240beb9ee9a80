import { randomBytes } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { getRequestListener } from "@hono/node-server";
import { createApp } from "./api/app.js";
import { type Config, loadConfig } from "./config.js";
import { createDataPlane, type DataPlane } from "./dataplane/data-plane.js";
import { routeRequest } from "./dataplane/routing.js";
import { newApiTokenValue } from "./domain/api-tokens.js";
import { QuotaJudge } from "./domain/blocking.js";
import type { Deps } from "./domain/context.js";
import { DbTokenVerifier } from "./domain/data-access.js";
import { DatabaseDirectory } from "./domain/directory.js";
import { LocationCatalogue } from "./domain/locations.js";
import { LocalNode, NodeStartError, requireSharedKey } from "./domain/nodes.js";
import { reconcileInstanceFiles } from "./domain/reconcile.js";
import { resumeSchemaPropagation } from "./domain/schema-databases.js";
import { UsageMeter } from "./domain/usage-meter.js";
import { bootstrapAdmin, hasAdmin } from "./domain/users.js";
import { DumpFiles } from "./engine/dump-files.js";
import { FrameLogs } from "./engine/frame-logs.js";
import { InstanceFiles } from "./engine/instance-files.js";
import { ConnectionPool } from "./engine/pool.js";
import { ConflictError } from "./errors.js";
import { createLogger, type Logger } from "./lib/logger.js";
import { loadOrCreateSigningKey } from "./lib/signing-keys.js";
import { systemClock } from "./lib/time.js";
import { ReplicationManager } from "./replication/manager.js";
import { openPostgresStore } from "./store/postgres.js";
import { openSqliteStore } from "./store/sqlite.js";

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
  /** Settles when start-up reconciliation (sweeping orphans, rebuilding missing replicas) is done. */
  reconciled: Promise<void>;
  /** Stops accepting connections, lets requests in flight finish, then closes the store. */
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  /** Where the first-start banner with a generated admin token goes (stdout by default). */
  announce?: (text: string) => void;
}

/** The composition root: config -> store -> domain -> HTTP server. */
export async function startShoal(config: Config, opts: StartOptions = {}): Promise<Shoal> {
  const log = opts.log ?? createLogger(config.logLevel);
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const store = config.metadataUrl
    ? await openPostgresStore(config.metadataUrl)
    : await openSqliteStore(config.dataDir);
  const keys = path.join(config.dataDir, "keys");
  const frameLogs = new FrameLogs();
  const deps: Deps = {
    store,
    files: new InstanceFiles(path.join(config.dataDir, "locations")),
    catalogue: new LocationCatalogue(config.locations),
    dbDomain: config.dbDomain,
    version: config.version,
    apiTokenKey: await loadOrCreateSigningKey(keys, "api-tokens"),
    dbTokenKey: await loadOrCreateSigningKey(keys, "db-tokens"),
    pool: new ConnectionPool({
      maxOpen: config.maxConnections,
      synchronous: config.durability === "strong" ? "FULL" : "NORMAL",
      beforeLastClose: (conn) => {
        if (frameLogs.get(conn.path).pending > 0) frameLogs.rollover(conn);
      },
    }),
    frameLogs,
    dumps: new DumpFiles(path.join(config.dataDir, "dumps")),
    directory: new DatabaseDirectory(store),
    tokenVerifier: undefined as unknown as DbTokenVerifier,
    meter: new UsageMeter(store, systemClock, log),
    replicas: undefined as unknown as ReplicationManager,
    placement: undefined as unknown as LocalNode,
    clock: systemClock,
    log,
  };
  deps.tokenVerifier = new DbTokenVerifier(deps);
  let sourceUrl = "";
  const replication = new ReplicationManager(deps, () => sourceUrl);
  deps.replicas = replication;
  frameLogs.onCommit((e) => replication.onCommit(e));
  const node = new LocalNode(
    store,
    systemClock,
    log,
    config.nodeId ?? (await loadOrCreateNodeId(config.dataDir)),
  );
  deps.placement = node;
  try {
    // Database tokens are signature-checked: a node with another key would refuse other nodes' tokens.
    await requireSharedKey(
      store,
      systemClock,
      "db-tokens",
      deps.dbTokenKey,
      path.join(keys, "db-tokens.jwk"),
    );
    await bootstrap(config, deps, opts.announce ?? ((t) => process.stdout.write(t)));
  } catch (e) {
    await store.close();
    throw e;
  }

  const api = createApp(deps, {
    rateLimit: { limit: config.rateLimit, windowSeconds: config.rateLimitWindowSeconds },
  });
  const dataPlane = createDataPlane(deps, {
    txnTimeoutMs: config.transactionTimeoutMs,
    lockWaitMs: config.transactionTimeoutMs,
    streamIdleMs: config.streamIdleTimeoutMs,
    trustedProxies: config.trustedProxies,
  });
  // One port serves both: a request whose Host or path names a database goes to the data plane
  // (on node's own request objects: it is the hot path), everything else to the management API.
  const apiListener = getRequestListener(api.fetch);
  // Listening comes before joining the nodes (the node's address is known once it listens); until
  // it has joined, it knows no locations it holds, so every request waits outside.
  let joined = false;
  const server = createServer((req, res) => {
    if (!joined) {
      res.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
      res.end(JSON.stringify({ error: "shoal is starting; retry in a moment" }));
      return;
    }
    const route = routeRequest(req.headers.host, req.url ?? "/", config.dbDomain);
    if (route) void dataPlane.handle(req, res, route);
    else void apiListener(req, res);
  });
  server.on("upgrade", (req, socket, head: Buffer) => {
    const route = routeRequest(req.headers.host, req.url ?? "/", config.dbDomain);
    if (!joined) {
      socket.end("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n\r\n");
      return;
    }
    if (!route) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
      return;
    }
    dataPlane.upgrade(req, socket, head, route);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // Plan quotas are judged after every flush of the usage counts; blocked organizations without
  // new usage are looked at again every ten flushes.
  const quotas = new QuotaJudge(deps, 10 * config.usageFlushIntervalMs);
  deps.meter.afterFlush((orgIds) => quotas.afterFlush(orgIds));
  deps.meter.start(config.usageFlushIntervalMs);
  const pruning = setInterval(() => {
    frameLogs.prune(Date.now() - config.historyRetentionHours * 3_600_000);
    deps.dumps.sweep();
  }, 10 * 60_000);
  pruning.unref();
  const port = (server.address() as AddressInfo).port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  // Replicas sync from this node's own address; a wildcard listen address is reached on loopback.
  const reachable = config.host === "0.0.0.0" ? "127.0.0.1" : config.host === "::" ? "[::1]" : host;
  sourceUrl = `http://${reachable}:${port}`;
  try {
    // Locations this node offers: the catalogue's, and any it has files for from earlier runs.
    const offered = [...new Set([...config.locations.map((l) => l.code), ...deps.files.locations()])];
    await node.join(config.nodeUrl ?? sourceUrl, config.version, offered, answersHealth);
    joined = true;
  } catch (e) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    dataPlane.close();
    await deps.meter.stop();
    clearInterval(pruning);
    await store.close();
    throw e;
  }
  // After listening: rebuilding a missing replica syncs it from this very server. Only the
  // locations this node holds are reconciled; the others are their holders' to check.
  const reconciled = reconcileInstanceFiles(deps, { holds: (l) => node.holds(l) })
    // Children of schema databases that missed changes before a stop get them now.
    .then(() => resumeSchemaPropagation(deps))
    .then(
      () => undefined,
      (e: unknown) => log.error({ err: e }, "reconciling instance files failed"),
    );
  log.info(
    { url: `http://${host}:${port}`, dataDir: config.dataDir, version: config.version },
    "shoal is ready",
  );

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    deps,
    dataPlane,
    replication,
    node,
    reconciled,
    close() {
      closing ??= (async () => {
        const drained = new Promise<void>((resolve) => server.close(() => resolve()));
        dataPlane.close();
        // Keep-alive connections that go idle once their request finishes would otherwise hold
        // the close for the keep-alive timeout; a stuck request gets cut after the deadline.
        const sweep = setInterval(() => server.closeIdleConnections(), 25);
        const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_DEADLINE_MS);
        server.closeIdleConnections();
        await drained;
        clearInterval(sweep);
        clearTimeout(deadline);
        clearInterval(pruning);
        await reconciled;
        await replication.close();
        await deps.meter.stop();
        await deps.pool.closeAll();
        await node.leave();
        await store.close();
      })();
      return closing;
    },
  };
}

/**
 * First start only: creates the administrator. A generated token is written to
 * `<data>/admin-token` (0600) before it is committed, so a crash can never leave an administrator
 * whose only token nobody has.
 */
async function bootstrap(config: Config, deps: Deps, announce: (text: string) => void): Promise<void> {
  if (await hasAdmin(deps)) {
    if (config.adminToken) deps.log.warn("SHOAL_ADMIN_TOKEN is only read on the first start; ignoring it");
    return;
  }
  const tokenFile = path.join(config.dataDir, "admin-token");
  const token = config.adminToken
    ? { id: (await newApiTokenValue(deps)).id, token: config.adminToken }
    : await newApiTokenValue(deps);
  if (!config.adminToken) await writeFile(tokenFile, `${token.token}\n`, { mode: 0o600 });
  let created: boolean;
  try {
    created = await bootstrapAdmin(deps, { username: config.adminUser, email: config.adminEmail, token });
  } catch (e) {
    // Several processes starting at once on an empty PostgreSQL store: another one created the
    // administrator between our check and our insert. That is a later start, not a failure.
    if (!(e instanceof ConflictError) || !(await hasAdmin(deps))) throw e;
    created = false;
  }
  if (!created) {
    if (!config.adminToken) await rm(tokenFile, { force: true });
    return;
  }
  deps.log.info({ username: config.adminUser }, "created the instance administrator");
  if (!config.adminToken) {
    announce(
      `\nShoal created the instance administrator "${config.adminUser}".\n` +
        `Its API token is shown once here and saved to ${tokenFile}:\n\n  ${token.token}\n\n`,
    );
  }
}

/** Whether a Shoal answers at `url` (another process using this node id, or one that just died). */
async function answersHealth(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

/**
 * The node id kept in the data folder, created on first start: stable across restarts, and
 * different for every data folder, so processes sharing a store never collide by default.
 */
async function loadOrCreateNodeId(dataDir: string): Promise<string> {
  const file = path.join(dataDir, "node-id");
  try {
    const id = (await readFile(file, "utf8")).trim();
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(id))
      throw new NodeStartError(`${file} does not hold a valid node id`);
    return id;
  } catch (e) {
    if (e instanceof NodeStartError) throw e;
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const id = `node-${randomBytes(4).toString("hex")}`;
  await writeFile(file, `${id}\n`, { mode: 0o600 });
  return id;
}

async function readVersion(): Promise<string> {
  const pkg = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "package.json");
  return (JSON.parse(await readFile(pkg, "utf8")) as { version: string }).version;
}

/** Starts Shoal from the environment, as `shoal start` (and `npm start`) run it, until a signal stops it. */
export async function runFromCommandLine(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env, await readVersion());
  } catch (e) {
    process.stderr.write(`shoal: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
  const log = createLogger(config.logLevel);
  let shoal: Shoal;
  try {
    shoal = await startShoal(config, { log });
  } catch (e) {
    if (!(e instanceof NodeStartError)) throw e;
    process.stderr.write(`shoal: ${e.message}\n`);
    process.exit(2);
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
    process.stderr.write(
      `shoal: failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
    );
    process.exit(1);
  });
}
