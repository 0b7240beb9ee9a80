import { MisdirectedError } from "../errors.js";
import type { Repos } from "../store/store.js";
import type { Deps } from "./context.js";

/**
 * Refuses, before anything is committed, a call whose database files would be made or removed in
 * a location this process doesn't hold: done here, the files would land in the wrong data folder
 * (or stay behind on the holder). The caller is told which node to send the call to instead.
 */
export async function requireFilesHere(r: Repos, deps: Deps, locations: Iterable<string>): Promise<void> {
  for (const location of new Set(locations)) {
    if (deps.placement.holds(location)) continue;
    const holder = await r.nodes.holderOf(location);
    if (!holder) {
      throw new MisdirectedError(
        `no node holds location ${location} yet: start a node whose SHOAL_LOCATIONS includes it`,
      );
    }
    throw new MisdirectedError(
      `the database files of location ${location} are kept by node ${holder.id} (${holder.url}), ` +
        `not by this node (${deps.placement.nodeId}): send this request to ${holder.url}`,
      "misdirected",
      holder,
    );
  }
}
