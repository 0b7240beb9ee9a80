import type { Repos } from "../../store/store.js";
import type { Placement } from "../core/ports.js";
import { clusterErrors } from "./errors.js";

/**
 * Refuses, before anything is committed, a call whose database files would be made or removed in
 * a location this process doesn't hold: done here, the files would land in the wrong data folder
 * (or stay behind on the holder). When one other node holds every location involved, the caller
 * is told which (and the API forwards the call there); a call spanning the locations of several
 * nodes can't be served by any one of them and is refused outright.
 */
export async function requireFilesHere(
  r: Repos,
  deps: { placement: Placement },
  locations: Iterable<string>,
): Promise<void> {
  const wanted = [...new Set(locations)];
  const elsewhere = wanted.filter((l) => !deps.placement.holds(l));
  if (elsewhere.length === 0) return;
  const holders = new Map<string, { id: string; url: string; locations: string[] }>();
  for (const location of elsewhere) {
    const holder = await r.nodes.holderOf(location);
    if (!holder) {
      throw clusterErrors.locationUnheld(location);
    }
    const entry = holders.get(holder.id) ?? { ...holder, locations: [] };
    entry.locations.push(location);
    holders.set(holder.id, entry);
  }
  const here = wanted.filter((l) => deps.placement.holds(l));
  if (holders.size > 1 || here.length > 0) {
    const parts = [...holders.values()].map((h) => `node ${h.id} holds ${h.locations.join(", ")}`);
    if (here.length > 0) parts.unshift(`node ${deps.placement.nodeId} holds ${here.join(", ")}`);
    throw clusterErrors.spansNodes(parts.join("; "));
  }
  const [holder] = [...holders.values()];
  throw clusterErrors.filesElsewhere(elsewhere, holder!, deps.placement.nodeId);
}
