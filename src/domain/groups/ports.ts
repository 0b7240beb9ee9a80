import type { Ctx } from "../core/context.js";
import type { DiskSpacePort } from "../core/disk.js";
import type {
  BasePorts,
  DataPlaneCache,
  FileFacts,
  Instances,
  Placement,
  ReplicaStatus,
} from "../core/ports.js";
import type { LocationCatalogue } from "./location-catalogue.js";

/** What the groups area's verbs reach. */
export interface GroupPorts extends BasePorts {
  /** How long deleted groups and their databases stay restorable; 0: not kept. */
  deletedRetentionMs: number;
  files: Pick<FileFacts, "sizeOf">;
  catalogue: LocationCatalogue;
  version: string;
  replicas: ReplicaStatus;
  placement: Placement;
  /** The data folder's free space: files are made only above its reserve. */
  disk: DiskSpacePort;
  instances: Instances;
  directory: DataPlaneCache;
  failover: FailoverPort;
}

/** What a failover did (`hosting/failover.ts`). */
export interface FailoverOutcome {
  epoch: number;
  /** When the new primary started accepting writes: the end of the old primary's lease. */
  validFrom: string;
  databases: number;
}

/** Moving a group's primary to another of its locations, on the node holding that location. */
export interface FailoverPort {
  promote(groupId: string, location: string, reason: string): Promise<FailoverOutcome>;
}

export type GroupCtx = Ctx<GroupPorts>;
