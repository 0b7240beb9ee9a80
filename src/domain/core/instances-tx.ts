import type { Repos } from "../../store/store.js";
import type { InstanceRef } from "./ports.js";

/** Every instance of every database in a group. */
export async function instancesOfGroup(r: Repos, groupId: string): Promise<InstanceRef[]> {
  const [group, ids, locations] = await Promise.all([
    r.groups.findById(groupId),
    r.databases.idsInGroup(groupId),
    r.groups.locationsOf([groupId]),
  ]);
  const locs = locations.get(groupId) ?? [];
  return ids.flatMap((dbId) =>
    locs.map((location) => ({ dbId, location, primary: location === group?.primary_location })),
  );
}

/** Every instance in an organization. */
export async function instancesOfOrganization(r: Repos, orgId: string): Promise<InstanceRef[]> {
  const out: InstanceRef[] = [];
  for (const g of await r.groups.list(orgId)) out.push(...(await instancesOfGroup(r, g.id)));
  return out;
}
