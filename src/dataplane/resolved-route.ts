import type { DataPlaneDatabase } from "../domain/data-access/ports.js";
import type { NodeChoice } from "./forward/node-choice.js";
import type { DataRoute } from "./routing.js";

/**
 * A request's route with what was decided about it once, in the process that read it
 * (`shards/resolver.ts`): the database's record and the node serving it. The data plane serves or
 * sends on from these without looking the database up again.
 */
export interface ResolvedRoute extends DataRoute {
  /** The database's record when it was resolved; undefined: not found, or the lookup failed. */
  record: DataPlaneDatabase | undefined;
  node: NodeChoice;
}
