import type { Repos } from "../store/store.js";
import type { Deps } from "./context.js";

/** One database's file in one location. */
export interface InstanceRef {
  dbId: string;
  location: string;
}

/** Every instance of every database in a group. */
export async function instancesOfGroup(r: Repos, groupId: string): Promise<InstanceRef[]> {
  const [ids, locations] = await Promise.all([
    r.databases.idsInGroup(groupId),
    r.groups.locationsOf([groupId]),
  ]);
  const locs = locations.get(groupId) ?? [];
  return ids.flatMap((dbId) => locs.map((location) => ({ dbId, location })));
}

/** Every instance in an organization. */
export async function instancesOfOrganization(r: Repos, orgId: string): Promise<InstanceRef[]> {
  const out: InstanceRef[] = [];
  for (const g of await r.groups.list(orgId)) out.push(...(await instancesOfGroup(r, g.id)));
  return out;
}

/**
 * Removes instance files once the rows that named them are committed away: open connections are
 * retired first, and the data plane's cache forgets the databases. A failure here leaves an orphan
 * file, never a dangling row; the start-up reconciliation sweeps orphans.
 */
export function removeInstanceFiles(deps: Deps, instances: readonly InstanceRef[]): void {
  deps.directory.invalidate();
  for (const i of instances) {
    try {
      const file = deps.files.path(i.location, i.dbId);
      deps.pool.retire(file);
      deps.frameLogs.forget(file);
      deps.files.remove(i.location, i.dbId);
    } catch (e) {
      deps.log.error({ err: e, dbId: i.dbId, location: i.location }, "could not remove instance files");
    }
  }
}
