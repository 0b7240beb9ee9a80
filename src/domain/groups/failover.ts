import { requireFilesHere } from "../cluster/placement-tx.js";
import { coreErrors } from "../core/errors.js";
import { requireInstanceAdmin } from "../core/roles.js";
import { groupErrors } from "./errors.js";
import type { FailoverOutcome, GroupCtx } from "./ports.js";

/**
 * `POST /v1/admin/groups/{org}/{group}/failover`: makes `location`, another location of the group,
 * its primary. The node holding that location runs it (the call is forwarded there): it takes the
 * next epoch of the group's lease, starting when the old primary's lease ends, so the old primary
 * stops accepting writes before the new one starts; its replicas there become the primaries.
 * Writes the old primary acknowledged that hadn't reached that replica are lost (see
 * docs/operations/three-machines.md).
 */
export async function failoverGroup(
  ctx: GroupCtx,
  slug: string,
  groupName: string,
  location: string,
): Promise<FailoverOutcome & { group: string; primary: string }> {
  requireInstanceAdmin(ctx.actor, "fail over a group");
  const { deps } = ctx;
  const group = await deps.store.read(async (r) => {
    const org = await r.organizations.findBySlug(slug);
    if (!org) throw coreErrors.organizationNotFound();
    const row = await r.groups.findByName(org.id, groupName);
    if (!row) throw coreErrors.groupNotFound();
    const locations = (await r.groups.locationsOf([row.id])).get(row.id) ?? [];
    if (!locations.includes(location)) {
      deps.catalogue.require(location);
      throw groupErrors.locationNotInGroup(location, groupName);
    }
    if (row.primary_location === location) throw groupErrors.alreadyPrimary(location, groupName);
    await requireFilesHere(r, deps, [location]);
    return row;
  });
  const done = await deps.failover.promote(group.id, location, "an administrator asked for it");
  return { ...done, group: groupName, primary: location };
}
