import type { Ctx } from "../core/context.js";
import type { BasePorts, DataPlaneCache, FileFacts, UsageFlush } from "../core/ports.js";

/** What the plans area's verbs reach: usage is flushed before it is judged, storage measured. */
export interface PlanPorts extends BasePorts {
  meter: UsageFlush;
  directory: DataPlaneCache;
  files: Pick<FileFacts, "sizeOf">;
}

export type PlanCtx = Ctx<PlanPorts>;
