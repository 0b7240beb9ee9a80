import { audit } from "../core/audit-tx.js";
import type { Ctx } from "../core/context.js";
import { requireInstanceAdmin } from "../core/roles.js";
import { clusterErrors } from "./errors.js";
import { isLive } from "./local-node.js";

/** A node as the instance administrator sees it. */
export interface NodeInfo {
  id: string;
  url: string;
  version: string;
  startedAt: string;
  heartbeatAt: string;
  stoppedAt: string | null;
  live: boolean;
  /** Locations whose database files this node serves. */
  locations: string[];
}

function requireAdmin(ctx: Ctx): void {
  requireInstanceAdmin(ctx.actor, "manage nodes");
}

/** `GET /v1/admin/nodes`: every node that has started on the store, live or not, with its locations. */
export async function listNodes(ctx: Ctx): Promise<NodeInfo[]> {
  requireAdmin(ctx);
  const now = ctx.deps.clock();
  const rows = await ctx.deps.store.read((r) => r.nodes.list());
  return rows.map((n) => ({
    id: n.id,
    url: n.url,
    version: n.version,
    startedAt: n.started_at,
    heartbeatAt: n.heartbeat_at,
    stoppedAt: n.stopped_at,
    live: isLive(n, now),
    locations: n.locations,
  }));
}

/**
 * `DELETE /v1/admin/nodes/{id}`: forgets a node that is gone for good; the locations it held
 * become free for the next node that starts. A live node can't be forgotten.
 */
export async function forgetNode(ctx: Ctx, id: string): Promise<void> {
  requireAdmin(ctx);
  await ctx.deps.store.write(async (r) => {
    const node = await r.nodes.find(id);
    if (!node) throw clusterErrors.nodeNotFound(id);
    if (isLive(node, ctx.deps.clock())) throw clusterErrors.nodeLive(id);
    const locations = await r.nodes.locationsOf(id);
    await r.nodes.delete(id);
    const own = await r.organizations.findBySlug(ctx.actor.username);
    if (own) {
      await audit(r, ctx, own.id, "node-forget", `node ${id} forgotten`, { node: id, locations });
    }
  });
}
