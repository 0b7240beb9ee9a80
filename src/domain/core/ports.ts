/** Rows read on a replica. */
export interface ReplicaRows {
  columns: Array<{ name: string; decltype: string | null }>;
  rows: unknown[][];
  durationMs: number;
}

/**
 * Replicas in the non-primary locations of a group, as the domain asks for them. Implemented by
 * the replication layer; a port here so the domain doesn't depend on it.
 */
export interface ReplicaPort {
  /** Makes sure the database has a caught-up replica in `location`, building it if needed. */
  ensure(dbId: string, location: string): Promise<void>;
  /** Hands a replica that exists on disk to its location, without contacting its primary. */
  adopt(dbId: string, location: string): Promise<void>;
  /** Has a replica pull what its primary committed while it wasn't following (after a restart). */
  catchUp(dbId: string, location: string): void;
  /** Removes the replica of the database in `location`, with its files. */
  drop(dbId: string, location: string): Promise<void>;
  /** Waits until every replica of these databases in `location` has what is committed now. */
  waitCaughtUp(dbIds: readonly string[], location: string, timeoutMs: number): Promise<boolean>;
  /** What the primary learned from a replica's sync request: it has everything up to `index`. */
  observe(dbId: string, location: string, index: number): void;
  /** Resolves true once the replica has everything up to replication index `index`. */
  waitFor(dbId: string, location: string, index: number, timeoutMs: number): Promise<boolean>;
  /** Runs a read statement on the replica. */
  query(dbId: string, location: string, sql: string, args: unknown): Promise<ReplicaRows>;
  status(location: string): "up" | "down";
}

/**
 * Which locations' database files this process keeps: those its node holds among the nodes
 * sharing the store (see `domain/nodes.ts`). Files are only made and removed by their holder.
 */
export interface Placement {
  readonly nodeId: string;
  holds(location: string): boolean;
}

/** Something the service needs to serve, checked by the readiness route: throws when it can't be used. */
export interface ReadinessProbe {
  /** What it checks, as the answer names it: `control-plane store`, `data folder`. */
  readonly name: string;
  check(): Promise<void>;
}

/** One database's instance in one location: the primary, or a replica. */
export interface InstanceRef {
  dbId: string;
  location: string;
  primary: boolean;
}
