import type { Ctx } from "../core/context.js";
import type { BasePorts, Placement } from "../core/ports.js";
import { requireInstanceAdmin } from "../core/roles.js";

/** One of the node's shard processes. */
export interface ShardState {
  index: number;
  /** Taking connections now; false while it starts again after it ended. */
  serving: boolean;
}

/** The replicas this node keeps in one location. */
export interface LocationReplication {
  location: string;
  replicas: number;
  /** Age of the oldest commit one of them doesn't have yet; 0 when every one is caught up. */
  behindMs: number;
}

/** A group whose primary this node holds, and the standbys its writes wait for. */
export interface PrimaryStandbys {
  groupId: string;
  /** Locations on other nodes holding every acknowledged write: an automatic failover may promote them. */
  standbys: string[];
  /** Replicas writes wait for while they are being recorded as standbys. */
  joining: string[];
  /** Cut off from a standby and the store: the group's primaries here serve nothing. */
  isolated: boolean;
}

/** What the node answering knows of its own processes and replicas, as it runs. */
export interface NodeRuntime {
  shards(): ShardState[];
  replication(): LocationReplication[];
  primaries(): PrimaryStandbys[];
  /** Databases refused for a while because their statements kept ending their shard. */
  quarantined(): number;
}

export interface NodeStatusPorts extends BasePorts {
  nodeRuntime: NodeRuntime;
  placement: Placement;
}

export interface NodeStatusView {
  node: string;
  shards: ShardState[];
  quarantined: number;
  replication: LocationReplication[];
  primaries: PrimaryStandbys[];
}

/** `GET /v1/admin/node`: the answering node's shards and how far its replicas trail. */
export function nodeStatus(ctx: Ctx<NodeStatusPorts>): NodeStatusView {
  requireInstanceAdmin(ctx.actor, "see the node's status");
  const rt = ctx.deps.nodeRuntime;
  return {
    node: ctx.deps.placement.nodeId,
    shards: rt.shards(),
    quarantined: rt.quarantined(),
    replication: rt.replication().sort((a, b) => a.location.localeCompare(b.location)),
    primaries: rt.primaries().sort((a, b) => a.groupId.localeCompare(b.groupId)),
  };
}
