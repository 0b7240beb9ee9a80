import { isoTime } from "../../lib/time.js";
import { requireFilesHere } from "../cluster/placement-tx.js";
import { requireGroup } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { diskFullError, requireDiskSpace } from "../core/disk.js";
import type { InstanceRef } from "../core/ports.js";
import { requireLocationQuota } from "../plans/quota-tx.js";
import { groupErrors } from "./errors.js";
import type { GroupCtx, GroupPorts } from "./ports.js";
import { type Group, toGroup } from "./views.js";

/** A location change asked for through the legacy instance routes, on behalf of one database. */
export interface ViaDatabase {
  id: string;
  name: string;
}

/**
 * Core operation 2: adds a location to a group. Every database of the group gets a replica there,
 * built and kept current by libSQL's sync client from its primary; databases created afterwards
 * get one too. The call returns once every replica is built and caught up. If one can't be built,
 * the location is removed again with every replica made for it. Adding a location the group
 * already has changes nothing, so the call is safe to retry.
 */
export async function addGroupLocation(
  ctx: GroupCtx,
  slug: string,
  groupName: string,
  location: string,
  via?: ViaDatabase,
): Promise<Group> {
  const { deps } = ctx;
  const plan = await deps.store.write(async (r) => {
    deps.catalogue.require(location);
    const { org, group: row } = await requireGroup(r, ctx.actor, slug, groupName, "group:configure");
    // The location quota locks the organization: take it before the group, as everywhere.
    await r.organizations.lockAll([org.id]);
    await r.groups.lock(row.id);
    const locations = (await r.groups.locationsOf([row.id])).get(row.id) ?? [];
    if (locations.includes(location))
      return { group: toGroup(row, locations), dbIds: [] as string[], added: false };
    await requireLocationQuota(r, org, location);
    // Only the new location's replicas are made: by its holder, following the primary wherever it is.
    await requireFilesHere(r, deps, [location]);
    requireDiskSpace(deps.disk, `adding location ${location} (its replicas need room)`);
    await r.groups.insertLocation({
      group_id: row.id,
      location,
      position: await r.groups.nextLocationPosition(row.id),
      added_at: isoTime(deps.clock()),
    });
    await auditLocation(r, ctx, org.id, "added", { groupName, location, via });
    return {
      group: toGroup(row, [...locations, location]),
      dbIds: await r.databases.idsInGroup(row.id),
      added: true,
    };
  });
  if (!plan.added) return plan.group;
  deps.directory.invalidate();
  try {
    await deps.instances.buildReplicas(plan.dbIds, location);
  } catch (e) {
    // Undo the whole operation rather than leave a location whose replicas are partly missing.
    deps.log.error(
      { err: e, group: plan.group.id, location },
      "building the new location's replicas failed; rolling it back",
    );
    await dropLocation(deps, plan.group.id, location);
    throw (
      diskFullError(e, deps.disk, `adding location ${location}`) ?? groupErrors.locationNotBuilt(location)
    );
  }
  return plan.group;
}

async function dropLocation(deps: GroupPorts, groupId: string, location: string): Promise<void> {
  const ids = await deps.store.write(async (r) => {
    await r.groups.deleteLocation(groupId, location);
    return r.databases.idsInGroup(groupId);
  });
  await deps.instances.remove(ids.map((dbId) => ({ dbId, location, primary: false })));
}

/**
 * Removes a location from a group with every replica there. The primary can't be removed.
 * Removing a location the group doesn't have changes nothing. Through the legacy instance routes
 * (`via`), only while that database is the group's only one: the location belongs to the group.
 */
export async function removeGroupLocation(
  ctx: GroupCtx,
  slug: string,
  groupName: string,
  location: string,
  via?: ViaDatabase,
): Promise<Group> {
  const { deps } = ctx;
  const { group, removed } = await deps.store.write(async (r) => {
    const { org, group: row } = await requireGroup(r, ctx.actor, slug, groupName, "group:configure");
    await r.groups.lock(row.id);
    const locations = (await r.groups.locationsOf([row.id])).get(row.id) ?? [];
    if (!locations.includes(location)) {
      // A code the catalogue no longer lists may still be removed from a group that has it.
      deps.catalogue.require(location);
      return { group: toGroup(row, locations), removed: [] as InstanceRef[] };
    }
    if (location === row.primary_location) throw groupErrors.primaryLocationKept();
    await requireFilesHere(r, deps, [location]);
    const ids = await r.databases.idsInGroup(row.id);
    if (via && (ids.length !== 1 || ids[0] !== via.id)) {
      throw groupErrors.instanceBelongsToGroup(location, via.name, groupName);
    }
    await r.groups.deleteLocation(row.id, location);
    await auditLocation(r, ctx, org.id, "removed", { groupName, location, via });
    return {
      group: toGroup(
        row,
        locations.filter((l) => l !== location),
      ),
      removed: ids.map((dbId) => ({ dbId, location, primary: false })),
    };
  });
  await deps.instances.remove(removed);
  return group;
}

/**
 * `GET .../groups/{g}/locations/{l}/wait`: resolves once every replica of the group's databases in
 * that location has everything committed at the time of the call. The primary location is always
 * ready. Times out with a 503 after `timeoutMs`.
 */
export async function waitForLocation(
  ctx: GroupCtx,
  slug: string,
  groupName: string,
  location: string,
  timeoutMs: number,
): Promise<void> {
  const { group, dbIds } = await ctx.deps.store.read(async (r) => {
    const { group: row } = await requireGroup(r, ctx.actor, slug, groupName, "read");
    const locations = (await r.groups.locationsOf([row.id])).get(row.id) ?? [];
    const group = toGroup(row, locations);
    // Only the primary's node knows what is committed and sees every replica's progress (each
    // syncs from it): another node sends the call there.
    if (locations.includes(location) && location !== group.primary)
      await requireFilesHere(r, ctx.deps, [group.primary]);
    return { group, dbIds: await r.databases.idsInGroup(row.id) };
  });
  if (!group.locations.includes(location)) {
    ctx.deps.catalogue.require(location);
    throw groupErrors.locationNotInGroup(location, groupName);
  }
  if (location === group.primary) return;
  if (!(await ctx.deps.replicas.waitCaughtUp(dbIds, location, timeoutMs))) {
    throw groupErrors.locationBehind(location, timeoutMs);
  }
}

/** The audit entry for a location added or removed, named as the instance when `via` one. */
async function auditLocation(
  r: Parameters<typeof audit>[0],
  ctx: GroupCtx,
  orgId: string,
  change: "added" | "removed",
  { groupName, location, via }: { groupName: string; location: string; via?: ViaDatabase },
): Promise<void> {
  const [instanceAction, locationAction, instanceVerb, preposition] =
    change === "added"
      ? (["instance-create", "group-location-add", "created", "to"] as const)
      : (["instance-delete", "group-location-remove", "deleted", "from"] as const);
  const what = `location ${location} ${change} ${preposition} group ${groupName}`;
  await audit(
    r,
    ctx,
    orgId,
    via ? instanceAction : locationAction,
    via ? `instance ${location} of database ${via.name} ${instanceVerb}: ${what}` : what,
    { group: groupName, location, ...(via ? { database: via.name } : {}) },
  );
}
