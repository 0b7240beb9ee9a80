import path from "node:path";
import type { Config } from "../config.js";
import { clientAddressResolver } from "../dataplane/client-address.js";
import { createDataPlane, type DataPlane, type DataPlaneSettings } from "../dataplane/data-plane.js";
import { ClientProof } from "../dataplane/forward/proof.js";
import type { DataPlaneParts } from "../dataplane/parts.js";
import { DbTokenVerifier } from "../domain/data-access/token-verifier.js";
import type { UploadTarget } from "../domain/data-access/upload-target.js";
import { AsyncGate } from "../engine/async-gate.js";
import { watchBlockingWork } from "../engine/blocking-work.js";
import type { EngineConnection } from "../engine/connection.js";
import { DumpFiles } from "../engine/dump-files.js";
import { KeyCache } from "../engine/encryption/key-cache.js";
import { type CommitEvent, type CommitStep, HostedDatabases } from "../engine/hosted-databases.js";
import { InstanceFiles } from "../engine/instance-files.js";
import type { LocalShipping } from "../hosting/backup-shipping.js";
import { ContentBuilder } from "../hosting/content-builder.js";
import { DiskSpace } from "../hosting/disk-space.js";
import { LocalRuntimes } from "../hosting/local-runtimes.js";
import { journalSchemaChange } from "../hosting/schema-propagation.js";
import { UsageTally } from "../hosting/usage-tally.js";
import { jwksPolicy } from "../lib/jwks.js";
import { createLogger, type Logger } from "../lib/logger.js";
import { derivedSecret, loadOrCreateSigningKey } from "../lib/signing-keys.js";
import { systemClock } from "../lib/time.js";
import { ShoalMetrics } from "../metrics/metrics.js";
import type { Channel } from "./channel.js";
import { Hop } from "./hop.js";
import { ownerOf } from "./ownership.js";
import type { PrimaryMethods, ShardInit, ShardMethods } from "./protocol.js";
import {
  LeaseMirror,
  PlacementMirror,
  RemoteDirectory,
  RemoteHolders,
  remoteReplicas,
} from "./shard-ports.js";

/** Everything one shard runs: the engine for the databases it owns, and the data plane over it. */
export interface ShardParts {
  init: ShardInit;
  config: Config;
  log: Logger;
  files: InstanceFiles;
  hosted: HostedDatabases;
  keys: KeyCache;
  directory: RemoteDirectory;
  placement: PlacementMirror;
  holders: RemoteHolders;
  leases: LeaseMirror;
  tally: UsageTally;
  metrics: ShoalMetrics;
  disk: DiskSpace;
  runtimes: LocalRuntimes;
  content: ContentBuilder;
  shipping: LocalShipping | undefined;
  dataPlane: DataPlane;
  hop: Hop;
}

/** What the log says when a step after a commit fails in the engine; the commit stands. */
const COMMIT_STEP_FAILURES: Record<CommitStep, string> = {
  "frame-log":
    "a commit could not be recorded in the frame log or its generation ended: the commit stands, the record is tried again at the next read or commit, a rollover after a pause",
  notice: "a listener of a commit failed (replication, read-your-writes, backup shipping): the commit stands",
};

/** The idle connections this shard keeps: its share of the node's `SHOAL_MAX_CONNECTIONS`. */
function connectionShare(config: Config, count: number): number {
  return Math.max(1, Math.ceil(config.maxConnections / count));
}

function engineOf(init: ShardInit, files: InstanceFiles): HostedDatabases {
  const { config } = init;
  return new HostedDatabases(
    {
      maxOpen: connectionShare(config, init.count),
      limits: {
        statementTimeoutMs: config.statementTimeoutMs,
        gate: new AsyncGate(init.statementThreads),
        heapLimitBytes: config.sqliteHeapLimitMb * 1024 * 1024,
      },
      synchronous: config.durability === "strong" ? "FULL" : "NORMAL",
    },
    files,
  );
}

/**
 * The commits of this shard's primaries that have replicas, told to the node once per turn of the
 * event loop: replication needs each database's newest position, so a burst of commits, of any
 * number of databases, is one message.
 */
function commitsTo(channel: Channel<ShardMethods, PrimaryMethods>, hosted: HostedDatabases): void {
  const latest = new Map<string, CommitEvent>();
  hosted.onCommit((e) => {
    if (!e.followed) return;
    if (latest.size === 0)
      setImmediate(() => {
        channel.emit("commits", [...latest.values()]);
        latest.clear();
      });
    latest.set(e.path, e);
  });
}

/** What the data plane is allowed to do, from the node's settings. */
function dataPlaneSettings(config: Config): DataPlaneSettings {
  return {
    txnTimeoutMs: config.transactionTimeoutMs,
    lockWaitMs: config.transactionTimeoutMs,
    streamIdleMs: config.streamIdleTimeoutMs,
    trustedProxies: config.trustedProxies,
    maxBytes: config.maxResponseBytes,
    maxTotalBytes: config.maxTotalResponseBytes,
    maxStreamsPerDatabase: config.maxStreamsPerDatabase,
    maxStreamsPerWebSocket: config.maxStreamsPerWebSocket,
    bodyTimeoutMs: config.bodyTimeoutMs,
  };
}

/** This process's own: the engine over the databases it owns, their keys, usage counts and metrics. */
function localParts(init: ShardInit, channel: Channel<ShardMethods, PrimaryMethods>) {
  const { config } = init;
  const files = new InstanceFiles(path.join(config.dataDir, "locations"));
  const hosted = engineOf(init, files);
  commitsTo(channel, hosted);
  // A long copy holds this shard's loop on purpose: the node's watchdog is told, so it waits.
  watchBlockingWork((holding) => channel.emit("excuse", holding));
  const metrics = new ShoalMetrics({ perDatabase: config.metricsPerDatabase ?? false });
  const keys = new KeyCache({
    idleMs: config.encryptionKeyIdleSeconds * 1000,
    onForget: (dbId) => {
      for (const location of files.locations()) hosted.find(files.path(location, dbId))?.retire();
      channel.emit("keyForgotten", dbId);
    },
    onRefused: (reason) => metrics.encryptionKeyRefused(reason),
  });
  // The node's primary process logs the changes; each shard only refuses writes on them.
  const disk = new DiskSpace(config.dataDir, config.diskReserveMb * 1024 * 1024);
  const tally = new UsageTally(systemClock);
  tally.onRecord((s) => metrics.statement(s));
  metrics.engine(() => hosted.stats());
  return { files, hosted, keys, tally, metrics, disk };
}

/** The node's parts the data plane reaches through the primary process (kept here where it reads them often). */
function nodePorts(init: ShardInit, channel: Channel<ShardMethods, PrimaryMethods>, files: InstanceFiles) {
  const primary = channel.remote;
  return {
    directory: new RemoteDirectory(primary),
    placement: new PlacementMirror(init.nodeId, init.held),
    leases: new LeaseMirror(primary),
    holders: new RemoteHolders(primary),
    replicas: remoteReplicas(primary, (dbId, location, index) =>
      channel.emit("observe", { dbId, location, index }),
    ),
    schema: {
      changed(
        parent: { id: string; primary_location: string },
        conn: EngineConnection,
        statements: readonly string[],
      ) {
        journalSchemaChange(files, parent, conn, statements);
        channel.emit("schema", { parentId: parent.id });
      },
    },
    uploads: { install: (target: UploadTarget, file: string) => primary.installUpload(target, file) },
    peers: {
      nodeId: init.nodeId,
      verify: (token: string | undefined) => primary.verifyPeer(token),
      urlOf: (location: string) => primary.peerUrl(location),
    },
  };
}

/**
 * Backup shipping of the primaries this shard owns, when the node ships backups. Loaded only
 * then: the S3 client is most of a shard's start-up time otherwise.
 */
async function shippingOf(
  init: ShardInit,
  channel: Channel<ShardMethods, PrimaryMethods>,
  local: ReturnType<typeof localParts>,
  log: Logger,
): Promise<LocalShipping | undefined> {
  const { config } = init;
  if (!config.backup) return undefined;
  const { LocalShipping } = await import("../hosting/backup-shipping.js");
  const shipping = new LocalShipping(
    config.backup,
    { files: local.files, hosted: local.hosted, log },
    async (fresh) =>
      (await channel.remote.heldPrimaries(fresh)).filter((p) => ownerOf(p.id, init.count) === init.index),
    path.join(config.dataDir, "backup-work", `shard-${init.index}`),
    log,
  );
  // Without SHOAL_BACKUP_URL there is no gauge at all (0 would say "caught up").
  local.metrics.addBackupSource(() => shipping.statusNow());
  return shipping;
}

/**
 * Builds a shard's parts. The database records, replicas, leases and node-to-node calls are the
 * primary process's, reached through `channel`; the engine, keys, usage counts and metrics are
 * this process's own.
 */
export async function wireShard(
  init: ShardInit,
  channel: Channel<ShardMethods, PrimaryMethods>,
): Promise<ShardParts> {
  const { config } = init;
  const log = createLogger(config.logLevel).child({ shard: init.index });
  const keysDir = path.join(config.dataDir, "keys");
  const apiTokenKey = await loadOrCreateSigningKey(keysDir, "api-tokens");
  const dbTokenKey = await loadOrCreateSigningKey(keysDir, "db-tokens");
  const local = localParts(init, channel);
  const { files, hosted } = local;
  hosted.onLostHistory((file, generation) => {
    local.metrics.lostHistory();
    log.warn(
      { file, generation },
      "a checkpoint Shoal didn't make ended this database's replication generation: its replicas in it start over",
    );
  });
  hosted.onStepFailed((step, file, error) => {
    local.metrics.afterCommitFailure(step);
    log.error({ err: error, file, step }, COMMIT_STEP_FAILURES[step]);
  });
  const node = nodePorts(init, channel, files);
  // Every node shares the database-token key, hence this secret (see dataplane/forward/proof.ts).
  const clientProof = new ClientProof(await derivedSecret(keysDir, "db-tokens", "data-plane forwarding"));
  const parts: DataPlaneParts = {
    ...node,
    tokenVerifier: new DbTokenVerifier({
      dbTokenKey,
      apiTokenKey,
      clock: systemClock,
      jwksPolicy: jwksPolicy(config.jwksPrivateAddresses),
    }),
    files,
    hosted,
    keys: local.keys,
    meter: local.tally,
    disk: local.disk,
    log,
    version: config.version,
    metrics: local.metrics,
    clientProof,
  };
  const clientAddress = clientProof.resolver(clientAddressResolver(config.trustedProxies));
  const dumps = new DumpFiles(path.join(config.dataDir, "dumps"));
  return {
    ...local,
    ...node,
    init,
    config,
    log,
    runtimes: new LocalRuntimes({ hosted, files }),
    content: new ContentBuilder({ files, hosted, dumps, clock: systemClock }),
    shipping: await shippingOf(init, channel, local, log),
    dataPlane: createDataPlane(parts, dataPlaneSettings(config)),
    hop: new Hop(init.nodeId, clientProof, clientAddress),
  };
}
