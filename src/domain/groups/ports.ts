import type { Ctx } from "../core/context.js";
import type { BasePorts, DataPlaneCache, Instances, Placement, ReplicaStatus } from "../core/ports.js";
import type { LocationCatalogue } from "./location-catalogue.js";

/** What the groups area's verbs reach. */
export interface GroupPorts extends BasePorts {
  catalogue: LocationCatalogue;
  version: string;
  replicas: ReplicaStatus;
  placement: Placement;
  instances: Instances;
  directory: DataPlaneCache;
}

export type GroupCtx = Ctx<GroupPorts>;
