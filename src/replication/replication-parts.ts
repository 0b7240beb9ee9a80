import type { DatabaseLookup } from "../domain/data-access/ports.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { Logger } from "../lib/logger.js";
import type { SigningKey } from "../lib/signing-keys.js";
import type { Clock } from "../lib/time.js";
import type { ReplicaSeeder } from "./seeding.js";

/** What replication reaches: primaries' files and logs, database records, the token key. */
export interface ReplicationParts {
  files: Pick<InstanceFiles, "path">;
  /** Where each primary's history stands (the process serving it knows). */
  primaries: { position(location: string, dbId: string): Promise<{ index: number }> };
  directory: Pick<DatabaseLookup, "find">;
  /** Signs the replicas' own read-only tokens. */
  dbTokenKey: SigningKey;
  clock: Clock;
  log: Logger;
  /** Other nodes: where a primary held elsewhere is served, and replicas held elsewhere. */
  peers?: ReplicaPeers;
  /** How often a replica whose primary is on another node pulls without being told (ms). */
  remotePollMs?: number;
  /** Carries, under time limits, the pulls of replicas whose primary is on another node. */
  relay?: PullRoutes;
  /** Where a replica of another node's primary is seeded from before it follows (the backup bucket). */
  seeder?: ReplicaSeeder;
}

/**
 * A way to another node's primary that a hung machine can't hold forever, through this node's own
 * server (`dataplane/forward/pull-relay.ts`): libSQL's sync client has no time limit of its own.
 */
export interface PullRoutes {
  /** Pulls of the replica of `dbId` in `location` go to `target`; returns the path on this node to sync from. */
  register(dbId: string, location: string, target: string): string;
  /** Ends the replica's pulls in flight at once, and relays no more of them. */
  cut(dbId: string, location: string): void;
}

/** What replication needs to know about the other nodes (`hosting/node-peers.ts`). */
export interface ReplicaPeers {
  holds(location: string): boolean;
  /** Base URL of the node serving the database's primary; undefined when it is this node. */
  primaryUrl(dbId: string): Promise<string | undefined>;
  /** The database's primary location (undefined: no such database). */
  primaryLocation(dbId: string): Promise<string | undefined>;
  /** Locations of the database's group whose replicas other nodes keep. */
  remoteLocations(dbId: string): string[];
  /** Reads again (soon, not from the cache) which node holds `location`: its node didn't answer. */
  recheck(location: string): void;
  /** Has the replica of `dbId` in `location`, kept by another node, pull now. */
  notify(dbId: string, location: string): void;
}
