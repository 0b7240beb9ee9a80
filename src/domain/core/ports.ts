import type { DatabaseKey } from "../../engine/encryption/keys.js";
import type { InstanceFiles } from "../../engine/instance-files.js";
import type { Logger } from "../../lib/logger.js";
import type { Clock } from "../../lib/time.js";
import type { Store } from "../../store/store.js";

/**
 * The interfaces the domain declares for what it reaches outside itself. `src/start/wiring.ts`
 * fills them with the concrete parts (the hosting services, the replication layer, the engine's
 * files); each area's `ports.ts` picks the ones its verbs need.
 */

/** Transactions on the control-plane store; opening and closing it is the process's business. */
export type StoreAccess = Pick<Store, "read" | "write">;

/** What every verb and service stands on. */
export interface BasePorts {
  store: StoreAccess;
  clock: Clock;
  log: Logger;
}

/** The data plane's cache of database records: cleared after every change to what it caches. */
export interface DataPlaneCache {
  invalidate(): void;
}

/** Usage counted in memory by the data plane, written to the store before anyone reads it. */
export interface UsageFlush {
  flush(): Promise<void>;
}

/** What the domain asks of a database's files: whether they are on this node, and how large. */
export type FileFacts = Pick<InstanceFiles, "exists" | "sizeOf">;

/**
 * Which locations' database files this process keeps: those its node holds among the nodes
 * sharing the store (see `cluster/local-node.ts`). Files are only made and removed by their holder.
 */
export interface Placement {
  readonly nodeId: string;
  holds(location: string): boolean;
}

/** One database's instance in one location: the primary, or a replica. */
export interface InstanceRef {
  dbId: string;
  location: string;
  primary: boolean;
}

/** Building and removing the instances of databases (`hosting/instance-lifecycle.ts`). */
export interface Instances {
  /**
   * Builds the replicas of databases in a location, a few at a time. Throws the first failure
   * after the others finished.
   */
  buildReplicas(dbIds: readonly string[], location: string): Promise<void>;
  /**
   * Removes instances once the rows that named them are committed away. A failure leaves an
   * orphan file, never a dangling row; the start-up reconciliation sweeps orphans.
   */
  remove(instances: readonly InstanceRef[], opts?: { keep?: boolean }): Promise<void>;
  /**
   * With `keep`, a primary's files are moved aside rather than deleted (a deleted database kept
   * restorable); these bring them back as the primary in `location`, measure and drop them.
   */
  restoreKept(location: string, dbId: string): void;
  keptBytes(dbId: string): number;
  dropKept(dbId: string): void;
}

/** What the verbs ask of replicas: whether a location serves, and whether it caught up. */
export interface ReplicaStatus {
  status(location: string): "up" | "down";
  /** Waits until every replica of these databases in `location` has what is committed now. */
  waitCaughtUp(dbIds: readonly string[], location: string, timeoutMs: number): Promise<boolean>;
}

/**
 * A replica that can't answer a read for a reason of its own, not the statement's: not built yet,
 * being rebuilt after a failover, unable to reach its primary while it opens, its worker gone.
 * The data plane then reads at the primary, which is never behind its replicas.
 */
export class ReplicaUnavailableError extends Error {
  constructor(
    readonly location: string,
    readonly reason: string,
  ) {
    super(`the replica in ${location} can't answer: ${reason}`);
  }
}

/** Rows read on a replica. */
export interface ReplicaRows {
  columns: Array<{ name: string; decltype: string | null }>;
  rows: unknown[][];
  durationMs: number;
}

/**
 * Replicas in the non-primary locations of a group, as the hosting services and the data plane
 * drive them. Implemented by the replication layer; a port here so nothing above it depends on it.
 */
export interface ReplicaPort extends ReplicaStatus {
  /** Makes sure the database has a caught-up replica in `location`, building it if needed. */
  ensure(dbId: string, location: string): Promise<void>;
  /** Hands a replica that exists on disk to its location, without contacting its primary. */
  adopt(dbId: string, location: string): Promise<void>;
  /** Has a replica pull what its primary committed while it wasn't following (after a restart). */
  catchUp(dbId: string, location: string): void;
  /** Removes the replica of the database in `location`, with its files. */
  drop(dbId: string, location: string): Promise<void>;
  /** What the primary learned from a replica's sync request: it has everything up to `index`. */
  observe(dbId: string, location: string, index: number): void;
  /** Resolves true once the replica has everything up to replication index `index`. */
  waitFor(dbId: string, location: string, index: number, timeoutMs: number): Promise<boolean>;
  /** Has the replica pull now: resolves once a pull begun after the call finished, rejects if it failed. */
  pullNow(dbId: string, location: string): Promise<void>;
  /** Runs a read statement on the replica. */
  /** `key`: the request's, for an encrypted database's replica. */
  query(dbId: string, location: string, sql: string, args: unknown, key?: DatabaseKey): Promise<ReplicaRows>;
}
