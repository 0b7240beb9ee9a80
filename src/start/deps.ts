import { availableParallelism } from "node:os";
import path from "node:path";
import type { Config } from "../config.js";
import type { Deps } from "../domain/context.js";
import { DbTokenVerifier } from "../domain/data-access.js";
import { DatabaseDirectory } from "../domain/directory.js";
import { LocationCatalogue } from "../domain/locations.js";
import { LocalNode } from "../domain/nodes.js";
import { UsageMeter } from "../domain/usage-meter.js";
import { AsyncGate } from "../engine/async-gate.js";
import { DumpFiles } from "../engine/dump-files.js";
import { FrameLogs } from "../engine/frame-logs.js";
import { InstanceFiles } from "../engine/instance-files.js";
import { ConnectionPool } from "../engine/pool.js";
import type { Logger } from "../lib/logger.js";
import { loadOrCreateSigningKey } from "../lib/signing-keys.js";
import { systemClock } from "../lib/time.js";
import { ReplicationManager } from "../replication/manager.js";
import type { Store } from "../store/store.js";
import { loadOrCreateNodeId } from "./node-identity.js";
import { dataFolderProbe, storeProbe } from "./readiness-probes.js";

export interface Wired {
  deps: Deps;
  replication: ReplicationManager;
  node: LocalNode;
  /** Tells replication the base URL replicas sync from, known once the server listens. */
  setSourceUrl(url: string): void;
}

/** The domain's dependencies over an open store, with the replication layer and this node. */
export async function wireDeps(config: Config, store: Store, log: Logger): Promise<Wired> {
  const keys = path.join(config.dataDir, "keys");
  const frameLogs = new FrameLogs();
  const files = new InstanceFiles(path.join(config.dataDir, "locations"));
  const deps: Deps = {
    store,
    files,
    catalogue: new LocationCatalogue(config.locations),
    dbDomain: config.dbDomain,
    version: config.version,
    apiTokenKey: await loadOrCreateSigningKey(keys, "api-tokens"),
    dbTokenKey: await loadOrCreateSigningKey(keys, "db-tokens"),
    pool: new ConnectionPool({
      maxOpen: config.maxConnections,
      limits: {
        statementTimeoutMs: config.statementTimeoutMs,
        gate: new AsyncGate(availableParallelism()),
        heapLimitBytes: config.sqliteHeapLimitMb * 1024 * 1024,
      },
      synchronous: config.durability === "strong" ? "FULL" : "NORMAL",
      beforeLastClose: (conn) => {
        if (frameLogs.get(conn.path).pending > 0) frameLogs.rollover(conn);
      },
    }),
    frameLogs,
    dumps: new DumpFiles(path.join(config.dataDir, "dumps")),
    directory: new DatabaseDirectory(store),
    tokenVerifier: undefined as unknown as DbTokenVerifier,
    meter: new UsageMeter(store, systemClock, log, (location, dbId) => files.sizeOf(location, dbId)),
    replicas: undefined as unknown as ReplicationManager,
    placement: undefined as unknown as LocalNode,
    readiness: [
      storeProbe(store, config.metadataUrl ? undefined : path.join(config.dataDir, "control-plane.db")),
      dataFolderProbe(config.dataDir),
    ],
    clock: systemClock,
    log,
  };
  deps.tokenVerifier = new DbTokenVerifier(deps);
  let sourceUrl = "";
  const replication = new ReplicationManager(deps, () => sourceUrl);
  deps.replicas = replication;
  frameLogs.onCommit((e) => replication.onCommit(e));
  const nodeId = config.nodeId ?? (await loadOrCreateNodeId(config.dataDir));
  const node = new LocalNode(store, systemClock, log, nodeId);
  deps.placement = node;
  return {
    deps,
    replication,
    node,
    setSourceUrl: (url) => {
      sourceUrl = url;
    },
  };
}
