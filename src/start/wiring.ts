import path from "node:path";
import type { Config } from "../config.js";
import { ClientProof } from "../dataplane/forward/proof.js";
import { PullRelay } from "../dataplane/forward/pull-relay.js";
import { LocationHolders } from "../domain/cluster/holders.js";
import { LocalNode } from "../domain/cluster/local-node.js";
import type { NodeRuntime } from "../domain/cluster/node-status.js";
import type { ReadinessProbe } from "../domain/cluster/readiness.js";
import { DbTokenVerifier } from "../domain/data-access/token-verifier.js";
import type { DatabaseContent } from "../domain/databases/ports.js";
import { LocationCatalogue } from "../domain/groups/location-catalogue.js";
import { DumpFiles } from "../engine/dump-files.js";
import { InstanceFiles } from "../engine/instance-files.js";
import { KeptFiles } from "../engine/kept-files.js";
import { BackupService, type BackupServicePorts } from "../hosting/backup-service.js";
import { HeldPrimaryList } from "../hosting/backup-source.js";
import type { DatabaseRuntimes } from "../hosting/database-runtimes.js";
import { DatabaseDirectory } from "../hosting/directory.js";
import type { DiskSpace } from "../hosting/disk-space.js";
import type { Failover } from "../hosting/failover.js";
import { InstanceLifecycle } from "../hosting/instance-lifecycle.js";
import { NodePeers } from "../hosting/node-peers.js";
import type { PrimaryLeases } from "../hosting/primary-leases.js";
import { SchemaPropagation } from "../hosting/schema-propagation.js";
import { UploadInstaller } from "../hosting/upload-installer.js";
import { UsageMeter } from "../hosting/usage-meter.js";
import { fetchJwks, jwksPolicy } from "../lib/jwks.js";
import type { Logger } from "../lib/logger.js";
import { derivedSecret, loadOrCreateSigningKey, type SigningKey } from "../lib/signing-keys.js";
import { type Clock, systemClock } from "../lib/time.js";
import { ShoalMetrics } from "../metrics/metrics.js";
import { ReplicationManager, type ReplicationParts } from "../replication/manager.js";
import { NodeShards } from "../shards/node-shards.js";
import { Supervisor } from "../shards/supervisor.js";
import type { Store } from "../store/store.js";
import { diskSpaceOf } from "./disk-space.js";
import { watchParts } from "./metrics-sources.js";
import { loadOrCreateNodeId } from "./node-identity.js";
import { nodeRuntime } from "./node-runtime.js";
import { primaryParts } from "./primary-parts.js";
import { dataFolderProbe, storeProbe } from "./readiness-probes.js";

/**
 * Every part of one Shoal process, built once. It is the only bag of concrete classes: the API,
 * the data plane, replication and each hosting service are handed it (or a few of its members)
 * as the narrow ports they declare.
 */
export interface Parts {
  store: Store;
  /** Read at every use: a test may set it, and every part sees the new time (see `wire`). */
  clock: Clock;
  log: Logger;
  /** Suffix of database hostnames: `<db>-<org>.<dbDomain>`. */
  dbDomain: string;
  /** How long deleted databases and groups stay restorable; 0: not kept. */
  deletedRetentionMs: number;
  version: string;
  apiTokenKey: SigningKey;
  /** Signs database and group tokens; kept apart from the API token key. */
  dbTokenKey: SigningKey;
  catalogue: LocationCatalogue;
  files: InstanceFiles;
  /**
   * The node's shards, which run its databases (each one's connections, write lock and frame
   * log, in the shard owning it), as the node's services reach them.
   */
  shards: NodeShards;
  /** Starts, feeds and restarts the shard processes. */
  supervisor: Supervisor;
  /** The primaries this node holds, listed for the shards that ship them to the backup bucket. */
  heldPrimaries: HeldPrimaryList;
  /** Uploaded SQL dumps waiting to seed new databases (`<data>/dumps`). */
  dumps: DumpFiles;
  directory: DatabaseDirectory;
  meter: UsageMeter;
  tokenVerifier: DbTokenVerifier;
  /** Fetches a key set URL an organization saves, and checks it holds usable public keys. */
  checkJwks(url: string): Promise<void>;
  replicas: ReplicationManager;
  /** The time-limited way this node's replicas pull from other nodes' primaries. */
  relay: PullRelay;
  /** This process among the nodes sharing the store, with the locations it holds. */
  placement: LocalNode;
  /** Its shards and replicas as they run, for the administrator (`GET /v1/admin/node`). */
  nodeRuntime: NodeRuntime;
  /** Which node holds each location, for data-plane requests sent on to it. */
  holders: LocationHolders;
  /** Signs the client address of a data-plane request sent on to another node. */
  clientProof: ClientProof;
  /** The other nodes: where their locations are served, and node-to-node calls. */
  peers: NodePeers;
  /** The leases of the primaries this node serves (the write fence). */
  leases: PrimaryLeases;
  failover: Failover;
  instances: InstanceLifecycle;
  kept: KeptFiles;
  content: DatabaseContent;
  schema: SchemaPropagation;
  uploads: UploadInstaller;
  /** The data folder's free space against `SHOAL_DISK_RESERVE_MB`. */
  disk: DiskSpace;
  /** What `GET /health/ready` checks. */
  readiness: readonly ReadinessProbe[];
  /** What `GET /metrics` shows; a backup shipper feeds it with `addBackupSource`. */
  metrics: ShoalMetrics;
  /** Continuous backups to the bucket (`SHOAL_BACKUP_URL`); undefined when off. */
  backups: BackupService | undefined;
}

export interface Wiring {
  parts: Parts;
  /** Tells replication the base URL replicas sync from, known once the server listens. */
  setSourceUrl(url: string): void;
}

/**
 * Threads of each shard's pool for statements whose work isn't bounded: two, so one database's
 * long scan never holds up another's in the same shard (more run at once on more shards).
 */
export const STATEMENT_THREADS_PER_SHARD = 2;

/** The shards running the node's databases (not started yet), and the node's view of them. */
function shardParts(config: Config, nodeId: string, files: InstanceFiles, log: Logger, held: () => string[]) {
  const supervisor = new Supervisor({
    count: config.workers,
    init: { count: config.workers, config, nodeId, held, statementThreads: STATEMENT_THREADS_PER_SHARD },
    log,
    // A statement stuck in the driver past its limit holds its shard's loop: past this, the shard is killed.
    watchdogMs: config.statementTimeoutMs + 1000,
  });
  return { supervisor, shards: new NodeShards(supervisor, files) };
}

/** What `GET /health/ready` checks: the store, and the data folder. */
function readinessProbes(config: Config, store: Store): ReadinessProbe[] {
  return [
    storeProbe(store, config.metadataUrl ? undefined : path.join(config.dataDir, "control-plane.db")),
    dataFolderProbe(config.dataDir),
  ];
}

/** The services that build, fill and change hosted databases' files. */
function hostingServices(ports: {
  store: Store;
  files: InstanceFiles;
  shards: NodeShards;
  directory: DatabaseDirectory;
  replicas: ReplicationManager;
  clock: Clock;
  log: Logger;
}) {
  const { store, files, shards, directory, replicas, clock, log } = ports;
  const runtimes: DatabaseRuntimes = shards.runtimes;
  const kept = new KeptFiles(files);
  const instances = new InstanceLifecycle({ store, runtimes, replicas, directory, kept, log });
  return {
    instances,
    kept,
    content: shards.content,
    schema: new SchemaPropagation({ store, files, runtimes, clock, log }),
    uploads: new UploadInstaller({ ...ports, runtimes, instances }),
  };
}

/**
 * Continuous backups of this node's primaries, when `SHOAL_BACKUP_URL` is set. Each shard ships
 * the primaries it owns (and shows its delay in its metrics, merged into the node's `/metrics`).
 */
function backupService(config: Config, ports: BackupServicePorts): BackupService | undefined {
  return config.backup ? new BackupService(config.backup, ports) : undefined;
}

/**
 * With backups on, replicas of other nodes' primaries start from the bucket's copy. The backup
 * service is built after the replicas (it rebuilds them after a restore), hence the getter.
 */
function seederOf(config: Config, backups: () => BackupService | undefined) {
  if (!config.backup) return undefined;
  const none = { kind: "none" as const, reason: "backups are not set up yet" };
  return {
    fetch: (dbId: string, dest: string) => backups()?.seedReplica(dbId, dest) ?? Promise.resolve(none),
  };
}

/**
 * Replicas of the locations held here, following their primaries; those on other nodes through
 * the relay, which limits how long a pull may hang.
 */
function replicationParts(
  config: Config,
  deps: ReplicationParts,
  apiTokenKey: SigningKey,
  sourceUrl: (dbId?: string) => string,
) {
  const tokenVerifier = new DbTokenVerifier({
    dbTokenKey: deps.dbTokenKey,
    apiTokenKey,
    clock: deps.clock,
    jwksPolicy: jwksPolicy(config.jwksPrivateAddresses),
  });
  const relay = new PullRelay(tokenVerifier, config.replicaPullTimeoutMs, deps.log);
  // Commits reach the replicas from the shards that make them (see src/start/shard-events.ts).
  const replicas = new ReplicationManager({ ...deps, relay }, sourceUrl);
  return { tokenVerifier, relay, replicas };
}

/** The node's metrics: this process's parts', and every shard's merged in at each scrape. */
function metricsOf(config: Config, parts: Parameters<typeof watchParts>[1] & { shards: NodeShards }) {
  const metrics = new ShoalMetrics({ perDatabase: config.metricsPerDatabase ?? false });
  watchParts(metrics, parts);
  metrics.addRemoteSource(() => parts.shards.metrics());
  return metrics;
}

/** This process among the nodes, and its view of the others. */
function nodeParts(
  store: Store,
  log: Logger,
  clock: Clock,
  nodeId: string,
  key: SigningKey,
  directory: DatabaseDirectory,
) {
  const placement = new LocalNode(store, systemClock, log, nodeId);
  const peers = new NodePeers({
    store,
    key,
    clock,
    log,
    nodeId,
    holds: (l) => placement.holds(l),
    peek: (id) => directory.peek({ id }),
    find: (id) => directory.find({ id }),
  });
  return { placement, peers };
}

/** The parts built over the replicas and the shards: leases and failover, metrics, readiness, backups. */
function laterParts(
  config: Config,
  p: {
    instances: InstanceLifecycle;
    store: Store;
    files: InstanceFiles;
    shards: NodeShards;
    replicas: ReplicationManager;
    directory: DatabaseDirectory;
    meter: UsageMeter;
    placement: LocalNode;
    log: Logger;
    disk: DiskSpace;
  },
) {
  const { instances, store, files, shards, replicas, directory, meter, placement, log } = p;
  const metrics = metricsOf(config, { files, meter, replicas, shards, disk: p.disk });
  const primaries = primaryParts(config, {
    store,
    files,
    runtimes: shards.runtimes,
    replicas,
    directory,
    log,
    placement,
    metrics,
  });
  const shipping = shards.shipping;
  return {
    ...primaries,
    metrics,
    nodeRuntime: nodeRuntime(shards.supervisor, replicas, primaries.leases),
    readiness: readinessProbes(config, store),
    heldPrimaries: new HeldPrimaryList({ store, files, placement, log }, 1000),
    backups: backupService(config, {
      store,
      files,
      shipping,
      runtimes: shards.runtimes,
      placement,
      instances,
      replicas,
      log,
    }),
  };
}

/**
 * Builds every part over an open store, each after what it needs: nothing is filled in later.
 * Nothing listens and no timer starts here. The one value known only later, the address replicas
 * sync from, is read through `setSourceUrl`.
 */
export async function wire(config: Config, store: Store, log: Logger): Promise<Wiring> {
  const keys = path.join(config.dataDir, "keys");
  const apiTokenKey = await loadOrCreateSigningKey(keys, "api-tokens");
  const dbTokenKey = await loadOrCreateSigningKey(keys, "db-tokens");
  // Parts are handed `clock`, which asks `time` at every call: setting `parts.clock` (tests move
  // time to a new month) reaches every part at once, as it did when they all shared one object.
  const time = { now: systemClock };
  const clock: Clock = () => time.now();
  const files = new InstanceFiles(path.join(config.dataDir, "locations"));
  const disk = diskSpaceOf(config, log);
  const dumps = new DumpFiles(path.join(config.dataDir, "dumps"));
  const directory = new DatabaseDirectory(store);
  const meter = new UsageMeter(store, systemClock, log, (location, dbId) => files.sizeOf(location, dbId));
  const nodeId = config.nodeId ?? (await loadOrCreateNodeId(config.dataDir));
  const { placement, peers } = nodeParts(store, log, clock, nodeId, dbTokenKey, directory);
  const { supervisor, shards } = shardParts(config, nodeId, files, log, () => [...placement.locations]);
  // Statements run in the shards, which count them; each flush collects their counts first.
  meter.collectFrom(() => shards.usage());
  let sourceUrl = "";
  let backups: BackupService | undefined;
  const seeder = seederOf(config, () => backups);
  const base = { files, primaries: shards.runtimes, directory, dbTokenKey, clock, log, peers, seeder };
  // This node's replicas sync from the shard serving their primary, on its internal port.
  const syncFrom = (dbId?: string) => (dbId ? shards.urlOf(dbId) : sourceUrl);
  const { tokenVerifier, relay, replicas } = replicationParts(config, base, apiTokenKey, syncFrom);
  const services = hostingServices({ store, files, shards, directory, replicas, clock, log });
  const later = laterParts(config, {
    instances: services.instances,
    store,
    files,
    shards,
    replicas,
    directory,
    meter,
    placement,
    log,
    disk,
  });
  backups = later.backups;
  const parts: Parts = {
    store,
    get clock() {
      return time.now;
    },
    set clock(c: Clock) {
      time.now = c;
    },
    log,
    dbDomain: config.dbDomain,
    deletedRetentionMs: config.deletedRetentionHours * 3_600_000,
    version: config.version,
    apiTokenKey,
    dbTokenKey,
    catalogue: new LocationCatalogue(config.locations),
    files,
    shards,
    supervisor,
    dumps,
    directory,
    meter,
    tokenVerifier,
    checkJwks: (url: string) => fetchJwks(url, jwksPolicy(config.jwksPrivateAddresses)).then(() => {}),
    replicas,
    relay,
    placement,
    holders: new LocationHolders(store),
    // Every node shares the database-token key, hence this secret (see dataplane/forward/proof.ts).
    clientProof: new ClientProof(await derivedSecret(keys, "db-tokens", "data-plane forwarding")),
    peers,
    disk,
    ...services,
    ...later,
  };
  return {
    parts,
    setSourceUrl: (url) => {
      sourceUrl = url;
    },
  };
}
