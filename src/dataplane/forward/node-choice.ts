import type { NodeAddress } from "../../domain/cluster/holders.js";
import type { Placement } from "../../domain/core/ports.js";
import type { DataPlaneDatabase } from "../../domain/data-access/ports.js";
import type { Logger } from "../../lib/logger.js";
import type { DataRoute } from "../routing.js";
import { forwardRefusals, type Refusal } from "./messages.js";

/** Which node holds a location (`domain/cluster/holders.ts`), cached. */
export interface HolderLookup {
  of(location: string): NodeAddress | undefined | Promise<NodeAddress | undefined>;
}

/** Which node serves a request: this one, another (sent on there), or none (refused). */
export type NodeChoice =
  | { here: true }
  | { here: false; holder: NodeAddress; database: string }
  | { here: false; refusal: Refusal };

export const HERE: NodeChoice = { here: true };

export interface NodeChoiceParts {
  placement: Placement;
  holders: HolderLookup;
  log: Logger;
}

/** Only a node id is repeated in an answer: the forwarding header may come from anyone. */
function senderOf(from: string): string {
  return /^[a-z0-9-]{1,64}$/.test(from) ? from : "(unnamed)";
}

/**
 * The node serving a request for `d` (the database's record; undefined when it can't be found,
 * which the local data plane answers with 404 or 503). A database whose location this node holds
 * is served here; one another node holds goes there, once: a request another node already sent
 * on is never sent on again (421). Synchronous when the holder is cached (the common case).
 */
export function chooseNode(
  parts: NodeChoiceParts,
  d: DataPlaneDatabase | undefined,
  route: DataRoute,
  forwardedBy: string | undefined,
): NodeChoice | Promise<NodeChoice> {
  // `/replication/<id>/...`: node-to-node traffic (a replica's sync, a "pull now" notice) that
  // Shoal itself addresses to the node it means; never sent on.
  if (d === undefined || "id" in route.locator) return HERE;
  // Another node sending on its location's writes (hrana/remote-primary-stream.ts) wants the
  // primary: this node serves them when it holds it, instead of sending them back to the sender.
  if (forwardedBy !== undefined && parts.placement.holds(d.primary_location)) return HERE;
  // The instance asked for (a location of the group), else the primary: its holder serves it.
  const location =
    route.location && d.locations.includes(route.location) ? route.location : d.primary_location;
  if (parts.placement.holds(location)) return HERE;
  const choose = (h: NodeAddress | undefined): NodeChoice => {
    if (!h) return { here: false, refusal: forwardRefusals.unheld(d.name, location) };
    // The store says this node holds it but this node gave it up (its record was taken over):
    // the local data plane refuses with 421 rather than serve a file it may no longer own.
    if (h.id === parts.placement.nodeId) return HERE;
    if (forwardedBy !== undefined)
      return { here: false, refusal: forwardRefusals.secondHop(d.name, h, senderOf(forwardedBy)) };
    return { here: false, holder: h, database: d.name };
  };
  const holder = parts.holders.of(location);
  if (!(holder instanceof Promise)) return choose(holder);
  return holder.then(choose, (e: unknown) => {
    parts.log.warn({ err: e, location }, "could not look up which node holds a location");
    return HERE;
  });
}
