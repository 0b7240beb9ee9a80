import { ConflictError, MisdirectedError } from "../../errors.js";
import type { Repos } from "../../store/store.js";
import type { Placement } from "../core/ports.js";

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
      throw new MisdirectedError(
        `no node holds location ${location} yet: start a node whose SHOAL_LOCATIONS includes it`,
      );
    }
    const entry = holders.get(holder.id) ?? { ...holder, locations: [] };
    entry.locations.push(location);
    holders.set(holder.id, entry);
  }
  const here = wanted.filter((l) => deps.placement.holds(l));
  if (holders.size > 1 || here.length > 0) {
    const parts = [...holders.values()].map((h) => `node ${h.id} holds ${h.locations.join(", ")}`);
    if (here.length > 0) parts.unshift(`node ${deps.placement.nodeId} holds ${here.join(", ")}`);
    throw new ConflictError(
      `this call involves database files kept by several nodes (${parts.join("; ")}), which no single node can act on: act on the groups of each node's locations separately`,
      "spans_nodes",
    );
  }
  const [holder] = [...holders.values()];
  throw new MisdirectedError(
    `the database files of location ${elsewhere.join(", ")} are kept by node ${holder!.id} (${holder!.url}), ` +
      `not by this node (${deps.placement.nodeId}): send this request to ${holder!.url}`,
    "misdirected",
    { id: holder!.id, url: holder!.url },
  );
}
