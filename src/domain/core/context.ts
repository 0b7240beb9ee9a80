import type { DumpFiles } from "../../engine/dump-files.js";
import type { FrameLogs } from "../../engine/frame-logs.js";
import type { InstanceFiles } from "../../engine/instance-files.js";
import type { ConnectionPool } from "../../engine/pool.js";
import type { DatabaseDirectory } from "../../hosting/directory.js";
import type { UsageMeter } from "../../hosting/usage-meter.js";
import type { Logger } from "../../lib/logger.js";
import type { SigningKey } from "../../lib/signing-keys.js";
import type { Clock } from "../../lib/time.js";
import type { Store } from "../../store/store.js";
import type { DbTokenVerifier } from "../data-access/open.js";
import type { LocationCatalogue } from "../groups/location-catalogue.js";

/** Who is calling: the user behind an API token, and what that token is restricted to. */
export interface Principal {
  userId: string;
  username: string;
  isAdmin: boolean;
  tokenId: string;
  tokenName: string;
  /** Organization the token is limited to, or null for every organization of the user. */
  orgId: string | null;
  /** Group the token is limited to, or null. */
  groupId: string | null;
  scopes: readonly string[] | null;
}

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

/** Everything the verbs need from the outside world, wired once in `main.ts`. */
export interface Deps {
  store: Store;
  files: InstanceFiles;
  catalogue: LocationCatalogue;
  /** Suffix of database hostnames: `<db>-<org>.<dbDomain>`. */
  dbDomain: string;
  version: string;
  apiTokenKey: SigningKey;
  /** Signs database and group tokens; kept apart from the API token key. */
  dbTokenKey: SigningKey;
  /** Open connections to hosted databases. */
  pool: ConnectionPool;
  /** Replication logs of the primaries on this node. */
  frameLogs: FrameLogs;
  /** Uploaded SQL dumps waiting to seed new databases (`<data>/dumps`). */
  dumps: DumpFiles;
  directory: DatabaseDirectory;
  tokenVerifier: DbTokenVerifier;
  meter: UsageMeter;
  replicas: ReplicaPort;
  placement: Placement;
  /** What `GET /health/ready` checks. */
  readiness: readonly ReadinessProbe[];
  clock: Clock;
  log: Logger;
}

/** One request's view of the domain: its dependencies, its caller and where the call came from. */
export interface Ctx {
  deps: Deps;
  actor: Principal;
  /** `cli`, `web` or `api`, from the caller's User-Agent; recorded in audit entries. */
  origin: string;
}
