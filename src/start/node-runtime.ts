import type { LocationReplication, NodeRuntime } from "../domain/cluster/node-status.js";
import type { PrimaryLeases } from "../hosting/primary-leases.js";
import type { ReplicationManager } from "../replication/manager.js";
import type { Supervisor } from "../shards/supervisor.js";

/** The node's running state, read from its shards' supervisor, its replicas and leases at each call. */
export function nodeRuntime(
  supervisor: Supervisor,
  replicas: Pick<ReplicationManager, "behind">,
  leases: Pick<PrimaryLeases, "standbyList">,
): NodeRuntime {
  return {
    primaries: () => leases.standbyList(),
    shards: () => supervisor.shards.map((s) => ({ index: s.index, serving: s.serving })),
    quarantined: () => supervisor.quarantine.list().length,
    replication: () => {
      const now = Date.now();
      const byLocation = new Map<string, LocationReplication>();
      for (const b of replicas.behind()) {
        const at = byLocation.get(b.location) ?? { location: b.location, replicas: 0, behindMs: 0 };
        at.replicas++;
        if (b.since !== undefined) at.behindMs = Math.max(at.behindMs, now - b.since);
        byLocation.set(b.location, at);
      }
      return [...byLocation.values()];
    },
  };
}
