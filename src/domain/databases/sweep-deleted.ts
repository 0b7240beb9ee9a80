import { isoTime } from "../../lib/time.js";
import type { DatabasePorts } from "./ports.js";

/**
 * Removes deleted databases and groups whose time to be restored is over: the row first (so no
 * restore can begin), then, only if this sweep is the one that removed it, the kept files. Each
 * node removes the databases whose files it keeps (those of the locations it holds); a deleted
 * group has no files, and any node removes its row. Answers how many databases went.
 */
export async function sweepDeleted(
  deps: Pick<DatabasePorts, "store" | "clock" | "placement" | "instances" | "log">,
): Promise<number> {
  const now = isoTime(deps.clock());
  const expired = await deps.store.read((r) => r.deletedDatabases.expired(now));
  let removed = 0;
  for (const d of expired) {
    if (!deps.placement.holds(d.primary_location)) continue;
    const gone = await deps.store.write((r) => r.deletedDatabases.remove(d.id));
    if (!gone) continue;
    try {
      deps.instances.dropKept(d.id);
      removed++;
    } catch (e) {
      deps.log.error({ err: e, dbId: d.id }, "could not remove a deleted database's kept files");
    }
  }
  for (const g of await deps.store.read((r) => r.deletedGroups.expired(now)))
    await deps.store.write((r) => r.deletedGroups.remove(g.id));
  if (removed > 0) deps.log.info({ removed }, "removed deleted databases whose time to be restored was over");
  return removed;
}
