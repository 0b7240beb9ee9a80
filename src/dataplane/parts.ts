import type { DiskSpacePort } from "../domain/core/disk.js";
import type { ReplicaPort } from "../domain/core/ports.js";
import type { DataAccessPorts } from "../domain/data-access/ports.js";
import type { EngineConnection } from "../engine/connection.js";
import type { KeyCache } from "../engine/encryption/key-cache.js";
import type { HostedDatabases } from "../engine/hosted-databases.js";
import type { UploadInstaller } from "../hosting/upload-installer.js";
import type { UsageRecorder } from "../hosting/usage-tally.js";
import type { Logger } from "../lib/logger.js";
import type { ShoalMetrics } from "../metrics/metrics.js";
import type { HolderLookup } from "./forward/node-choice.js";
import type { ClientProof } from "./forward/proof.js";
import type { PullRelay } from "./forward/pull-relay.js";
import type { DataPlanePeers } from "./replica-notify.js";

/**
 * What the data plane reaches, filled by `src/start/wiring.ts`: deciding access (a token against
 * a database record), the engine's connections and replication logs, replicas, usage counting,
 * schema changes and uploads; and, for databases other nodes hold, where to send their
 * requests. Declared apart from `data-plane.ts`, which imports the transports that take it.
 */
export interface DataPlaneParts extends DataAccessPorts {
  /** The databases this node runs: their connections, write locks and frame logs. */
  hosted: HostedDatabases;
  /** Keys of encrypted databases in use, in memory only (ADR 0016). */
  keys: KeyCache;
  replicas: ReplicaPort;
  meter: UsageRecorder;
  /** The data folder's free space against its reserve (see hosting/disk-space.ts). */
  disk?: DiskSpacePort;
  /**
   * Told right after a transaction that ran DDL committed on a schema database, on the connection
   * that committed it: the change is journaled and its children brought forward.
   */
  schema: {
    changed(
      parent: { id: string; primary_location: string },
      conn: EngineConnection,
      statements: readonly string[],
    ): void;
  };
  uploads: Pick<UploadInstaller, "install">;
  log: Logger;
  version: string;
  metrics: Pick<ShoalMetrics, "dataRequest" | "webSocket" | "afterCommitFailure">;
  /** Which node holds each location, for requests this node sends on to another. */
  holders: HolderLookup;
  /** Signs and checks the client address of requests one node forwards to another. */
  clientProof: ClientProof;
  /** The other nodes sharing the store (absent: this node serves alone). */
  peers?: DataPlanePeers;
  /** Carries this node's replicas' pulls from other nodes' primaries (absent: no other nodes). */
  relay?: Pick<PullRelay, "handle">;
  /**
   * Whether this node holds the lease of a group's primary (absent: always), and the standbys its
   * writes wait for (hosting/standbys.ts).
   */
  leases?: {
    mayWrite(groupId: string): boolean;
    acquire(groupId: string): Promise<boolean>;
    isolated(groupId: string): boolean;
    confirms(groupId: string): boolean;
    confirm(groupId: string, dbId: string, index: number): Promise<boolean>;
  };
}
