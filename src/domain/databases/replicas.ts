import type { DatabasePorts } from "./ports.js";

/**
 * Builds a database's replicas in `locations` (the primary's own skipped) after its row is
 * committed. A replica that can't be built now is logged, not thrown: the next reconciliation
 * builds it, and the database itself is already there.
 */
export async function buildReplicasAfter(
  deps: Pick<DatabasePorts, "instances" | "log">,
  dbId: string,
  locations: readonly string[],
  primary?: string,
): Promise<void> {
  for (const location of locations) {
    if (location === primary) continue;
    await deps.instances
      .buildReplicas([dbId], location)
      .catch((e: unknown) =>
        deps.log.error({ err: e, dbId, location }, "could not build a replica; reconciliation will retry"),
      );
  }
}
