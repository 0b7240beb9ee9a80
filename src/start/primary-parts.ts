import type { Config } from "../config.js";
import type { LocalNode } from "../domain/cluster/local-node.js";
import { Failover, type FailoverParts } from "../hosting/failover.js";
import { PrimaryLeases } from "../hosting/primary-leases.js";
import { SyncStandbys } from "../hosting/standbys.js";
import type { ShoalMetrics } from "../metrics/metrics.js";
import type { ReplicationManager } from "../replication/manager.js";

/**
 * The leases of this node's primaries, failover, which moves and fences them, and the standbys
 * writes wait for (unless SHOAL_STANDBY_CONFIRM_MS is 0).
 */
export function primaryParts(
  config: Config,
  p: Omit<FailoverParts, "nodeId" | "holds" | "leaseMs" | "leases" | "replicas"> & {
    placement: LocalNode;
    replicas: ReplicationManager;
    metrics: ShoalMetrics;
  },
) {
  // (Failover asks the shards serving a group's databases where their history stands.)
  const failover: Failover = new Failover({
    ...p,
    nodeId: p.placement.nodeId,
    holds: (l) => p.placement.holds(l),
    leaseMs: config.primaryLeaseMs,
    leases: () => leases,
  });
  const leases: PrimaryLeases = new PrimaryLeases({
    store: p.store,
    log: p.log,
    nodeId: p.placement.nodeId,
    locations: () => p.placement.locations,
    leaseMs: config.primaryLeaseMs,
    failoverAfterMs: config.failoverAfterMs,
    lost: (groupId) => failover.demote(groupId),
    failover: (groupId, location, reason, opts) => failover.promote(groupId, location, reason, opts),
  });
  if (config.standbyConfirmMs > 0) leases.useStandbys(standbysOf(config, p, leases));
  return { leases, failover };
}

function standbysOf(
  config: Config,
  p: Pick<FailoverParts, "store" | "log"> & {
    placement: LocalNode;
    replicas: ReplicationManager;
    metrics: ShoalMetrics;
  },
  leases: PrimaryLeases,
): SyncStandbys {
  return new SyncStandbys({
    store: p.store,
    log: p.log,
    nodeId: p.placement.nodeId,
    confirmMs: config.standbyConfirmMs,
    replicas: p.replicas,
    group: async (groupId) => {
      const found = await p.store.read(async (r) => ({
        locations: (await r.groups.locationsOf([groupId])).get(groupId) ?? [],
        dbIds: await r.databases.idsInGroup(groupId),
      }));
      return { remote: found.locations.filter((l) => !p.placement.holds(l)), dbIds: found.dbIds };
    },
    epochOf: (groupId) => leases.epochOf(groupId),
    heldGroups: () => leases.heldGroups(),
    announce: () => leases.announce(),
    counted: (event) => p.metrics.standbyEvent(event),
  });
}
