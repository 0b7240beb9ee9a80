import type { ShipperStatus } from "../backup/shipper.js";
import type { BackupPrimary } from "../backup/source.js";
import type { Config } from "../config.js";
import type { NodeAddress } from "../domain/cluster/holders.js";
import type { ReplicaRows } from "../domain/core/ports.js";
import type { DatabaseLocator, DataPlaneDatabase } from "../domain/data-access/ports.js";
import type { UploadTarget } from "../domain/data-access/upload-target.js";
import type { BuiltContent, ContentPlan } from "../domain/databases/ports.js";
import type { DatabaseKey } from "../engine/encryption/keys.js";
import type { CommitEvent } from "../engine/hosted-databases.js";
import type { PoolStats } from "../engine/pool.js";
import type { DatabaseRuntimes } from "../hosting/database-runtimes.js";
import type { LeaseView } from "../hosting/primary-leases.js";
import type { UsageBatch } from "../hosting/usage-tally.js";
import type { Quarantined } from "./quarantine.js";

/**
 * What passes between the node's primary process and its shards: the shard's start-up facts, the
 * methods each side answers for the other, and the one-way events. Everything here crosses the
 * IPC pipe by structured clone, so it is plain data.
 */

/** Internal loopback ports the primary listens on, one per process: requests sent on land there. */
export interface InternalPorts {
  primary: number;
  shards: number[];
}

export interface ShardInit {
  index: number;
  count: number;
  config: Config;
  nodeId: string;
  /** Locations this node holds now (updated by the `placement` event). */
  held: string[];
  ports: InternalPorts;
  /** Databases refused now (updated by the `quarantine` event). */
  quarantined: Quarantined[];
  /** Threads of the driver's pool for statements whose work isn't bounded (`TOKIO_WORKER_THREADS`). */
  statementThreads: number;
  /** The private folder of the shards' hop sockets (sql-hop.ts); none: requests hop over HTTP only. */
  hopDir: string | undefined;
}

export type { LeaseView } from "../hosting/primary-leases.js";

/** What a shard asks of the node (its primary process answers). */
export type PrimaryMethods = {
  /**
   * The database's record and when it was read from the store: the node's cached read, or, with
   * `fresh`, a new one (the shard caches it until that read is as old as the directory's TTL).
   */
  find(
    locator: DatabaseLocator,
    fresh: boolean,
  ): Promise<{ record: DataPlaneDatabase | undefined; at: number }>;
  groupExists(groupId: string): Promise<boolean>;
  holderOf(location: string): Promise<NodeAddress | undefined>;
  peerUrl(location: string): Promise<string | undefined>;
  verifyPeer(token: string | undefined): Promise<string | undefined>;
  replicaWaitFor(dbId: string, location: string, index: number, timeoutMs: number): Promise<boolean>;
  replicaPullNow(dbId: string, location: string): Promise<void>;
  replicaQuery(
    dbId: string,
    location: string,
    sql: string,
    args: unknown,
    key: DatabaseKey | undefined,
  ): Promise<ReplicaRows>;
  /** Resolves true once the group's standbys have `dbId` up to `index` (hosting/standbys.ts). */
  standbyConfirm(groupId: string, dbId: string, index: number): Promise<boolean>;
  /** Renews the leases if needed; answers the group's lease as held afterwards (none: undefined). */
  leaseAcquire(groupId: string): Promise<LeaseView | undefined>;
  installUpload(target: UploadTarget, file: string): Promise<void>;
  /** The primaries this node holds (for the shard's backup shipping, which keeps its own). */
  heldPrimaries(fresh: boolean): Promise<Array<BackupPrimary & { location: string }>>;
};

/**
 * What the node asks of a shard, about the databases it owns: the running state every process's
 * services reach (`DatabaseRuntimes`, declared once), and what only the node asks.
 */
export type ShardMethods = Pick<DatabaseRuntimes, keyof DatabaseRuntimes> & {
  ping(): "pong";
  buildContent(location: string, id: string, plan: ContentPlan, maxBytes: number): Promise<BuiltContent>;
  /** Ends a database's current generation now (tests of generation changes use it). */
  rollover(path: string): boolean;
  prune(before: number): number;
  /** Drops one primary's archived generations that ended before `before`, keeping the newest `keep`. */
  pruneLog(path: string, before: number, keep: number): number;
  /** Keys of encrypted databases this shard keeps in memory now. */
  keyCount(): number;
  stats(): PoolStats;
  takeUsage(): UsageBatch;
  /** The shard's metrics, as prom-client's JSON (merged into the node's `/metrics`). */
  metrics(): Promise<unknown[]>;
  streams(): { open: number; pullWaiters: number };
  /** Starts shipping the primaries this shard owns (once the node knows which locations it holds). */
  backupStart(): Promise<void>;
  backupStatus(): Promise<ShipperStatus> | undefined;
  /** Stops shipping one database until `backupResume`, after the pass in progress. */
  backupPause(dbId: string): Promise<void>;
  backupResume(dbId: string): void;
  /** One last shipping pass, then no more (shutdown). */
  backupStop(): Promise<void>;
  /** Stops taking requests and lets those in flight finish (shutdown's first step). */
  drain(): Promise<void>;
};

/** Events a shard sends: each carries no answer. */
export interface ShardEvents {
  ready: null;
  /** The newest commit of each database that committed since the last such message. */
  commits: CommitEvent[];
  observe: { dbId: string; location: string; index: number };
  /** A schema database committed a change the shard journaled: its children catch up. */
  schema: { parentId: string };
  /** An encrypted database's key was dropped: its replica readers close too. */
  keyForgotten: string;
}

/** Events the primary sends. */
export interface PrimaryEvents {
  init: ShardInit;
  stop: null;
  /** Forget cached database records (a change through this node's management API). */
  invalidate: null;
  placement: { held: string[] };
  leases: LeaseView[];
  quarantine: Quarantined[];
}
