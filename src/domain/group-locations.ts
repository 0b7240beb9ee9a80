import { InvalidError } from "../errors.js";
import { isoTime } from "../lib/time.js";
import { audit } from "./audit.js";
import type { Ctx, Deps } from "./context.js";
import { groupNotFound } from "./groups.js";
import { type InstanceRef, removeInstanceFiles } from "./instances.js";
import { requireOrgAccess } from "./roles.js";
import { type Group, toGroup } from "./views.js";

/**
 * Core operation 2: adds a location to a group. Every database of the group gets an instance there,
 * seeded from a consistent snapshot of its primary; databases created afterwards get one too
 * because they are created in every location of their group. Adding a location the group already
 * has changes nothing, so the call is safe to retry.
 */
export async function addGroupLocation(
  ctx: Ctx,
  slug: string,
  groupName: string,
  location: string,
): Promise<Group> {
  const { deps } = ctx;
  const plan = await deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "write");
    deps.catalogue.require(location);
    const row = await r.groups.findByName(org.id, groupName);
    if (!row) throw groupNotFound();
    await r.groups.lock(row.id);
    const locations = (await r.groups.locationsOf([row.id])).get(row.id) ?? [];
    if (locations.includes(location)) return { group: toGroup(row, locations), dbIds: [] as string[] };
    await r.groups.insertLocation({
      group_id: row.id,
      location,
      position: await r.groups.nextLocationPosition(row.id),
      added_at: isoTime(deps.clock()),
    });
    await audit(r, ctx, org.id, "group-location-add", `location ${location} added to group ${groupName}`, {
      group: groupName,
      location,
    });
    return { group: toGroup(row, [...locations, location]), dbIds: await r.databases.idsInGroup(row.id) };
  });
  deps.directory.invalidate();
  try {
    seedLocation(deps, plan.group.primary, location, plan.dbIds);
  } catch (e) {
    // Undo the whole operation rather than leave a location whose instances are partly missing.
    deps.log.error(
      { err: e, group: plan.group.id, location },
      "seeding a new location failed; rolling it back",
    );
    await dropLocation(deps, plan.group.id, location);
    throw e;
  }
  return plan.group;
}

function seedLocation(deps: Deps, primary: string, location: string, dbIds: readonly string[]): void {
  const started = Date.now();
  for (const [i, dbId] of dbIds.entries()) {
    // A database deleted while we seed has no primary file any more; there is nothing to copy.
    if (!deps.files.exists(primary, dbId)) continue;
    deps.files.copy(primary, location, dbId);
    if ((i + 1) % 100 === 0)
      deps.log.info({ location, done: i + 1, total: dbIds.length }, "seeding location");
  }
  deps.log.info({ location, databases: dbIds.length, ms: Date.now() - started }, "location seeded");
}

async function dropLocation(deps: Deps, groupId: string, location: string): Promise<void> {
  const ids = await deps.store.write(async (r) => {
    await r.groups.deleteLocation(groupId, location);
    return r.databases.idsInGroup(groupId);
  });
  removeInstanceFiles(
    deps,
    ids.map((dbId) => ({ dbId, location })),
  );
}

/**
 * Removes a location from a group with every instance there. The primary can't be removed.
 * Removing a location the group doesn't have changes nothing.
 */
export async function removeGroupLocation(
  ctx: Ctx,
  slug: string,
  groupName: string,
  location: string,
): Promise<Group> {
  const { deps } = ctx;
  const { group, removed } = await deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "write");
    const row = await r.groups.findByName(org.id, groupName);
    if (!row) throw groupNotFound();
    await r.groups.lock(row.id);
    const locations = (await r.groups.locationsOf([row.id])).get(row.id) ?? [];
    if (!locations.includes(location)) {
      // A code the catalogue no longer lists may still be removed from a group that has it.
      deps.catalogue.require(location);
      return { group: toGroup(row, locations), removed: [] as InstanceRef[] };
    }
    if (location === row.primary_location) throw new InvalidError("cannot remove primary location");
    await r.groups.deleteLocation(row.id, location);
    await audit(
      r,
      ctx,
      org.id,
      "group-location-remove",
      `location ${location} removed from group ${groupName}`,
      {
        group: groupName,
        location,
      },
    );
    const ids = await r.databases.idsInGroup(row.id);
    return {
      group: toGroup(
        row,
        locations.filter((l) => l !== location),
      ),
      removed: ids.map((dbId) => ({ dbId, location })),
    };
  });
  removeInstanceFiles(deps, removed);
  return group;
}
