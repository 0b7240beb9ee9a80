import { UniqueViolationError } from "../../errors.js";
import { decodeStringCursor, type Page, type PageRequest, pageOf } from "../../lib/cursor.js";
import { newUuid } from "../../lib/ids.js";
import { isoTime } from "../../lib/time.js";
import type { Repos } from "../../store/store.js";
import { requireFilesHere } from "../cluster/placement-tx.js";
import { requireGroup, requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { coreErrors } from "../core/errors.js";
import { instancesOfGroup } from "../core/instances-tx.js";
import { keepsDeleted } from "../core/kept.js";
import { keepDeleted } from "../core/kept-tx.js";
import { checkGroupName } from "../core/names.js";
import type { ReplicaStatus } from "../core/ports.js";
import type { Ref } from "../core/ref.js";
import { requireLocationQuota, requireQuota } from "../plans/quota-tx.js";
import { groupErrors } from "./errors.js";
import type { GroupCtx } from "./ports.js";
import { type Group, statusOf, toGroup } from "./views.js";

/** Loads a group by name within an organization, with its locations. */
async function loadGroup(
  r: Repos,
  orgId: string,
  name: string,
  deps?: { replicas: ReplicaStatus },
): Promise<Group | undefined> {
  const row = await r.groups.findByName(orgId, name);
  if (!row) return undefined;
  return toGroup(row, (await r.groups.locationsOf([row.id])).get(row.id) ?? [], statusOf(deps));
}

/** Creates a group whose primary location is `location` (the catalogue's first when omitted). */
export async function createGroup(
  ctx: GroupCtx,
  slug: string,
  input: { name: string; location?: string },
): Promise<Group> {
  checkGroupName(input.name);
  const location = input.location || ctx.deps.catalogue.default.code;
  ctx.deps.catalogue.require(location);
  return ctx.deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "group:create");
    await requireQuota(r, org, "groups");
    await requireLocationQuota(r, org, location);
    const now = isoTime(ctx.deps.clock());
    const row = {
      id: newUuid(),
      org_id: org.id,
      name: input.name,
      primary_location: location,
      archived: 0,
      delete_protection: 0,
      created_at: now,
      token_generation: 0,
    };
    try {
      await r.groups.insert(row);
    } catch (e) {
      if (e instanceof UniqueViolationError) throw groupErrors.exists();
      throw e;
    }
    await r.groups.insertLocation({ group_id: row.id, location, position: 0, added_at: now });
    await audit(r, ctx, org.id, "group-create", `group ${input.name} created in ${location}`, {
      group: input.name,
      location,
    });
    return toGroup(row, [location]);
  });
}

/** An organization's groups by name, in pages when `page.limit` is set. */
export async function listGroups(ctx: GroupCtx, slug: Ref, page: PageRequest = {}): Promise<Page<Group>> {
  const after = decodeStringCursor(page.cursor);
  return ctx.deps.store.read(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "read");
    const rows = pageOf(
      await r.groups.list(org.id, {
        // A group-scoped token sees its own group only.
        id: ctx.actor.groupId ?? undefined,
        after,
        limit: page.limit === undefined ? undefined : page.limit + 1,
      }),
      page.limit,
      (g) => g.name,
    );
    const locations = await r.groups.locationsOf(rows.items.map((g) => g.id));
    return {
      items: rows.items.map((g) => toGroup(g, locations.get(g.id) ?? [], statusOf(ctx.deps))),
      next: rows.next,
    };
  });
}

export async function getGroup(ctx: GroupCtx, slug: Ref, ref: Ref): Promise<Group> {
  return ctx.deps.store.read(async (r) => {
    const { org, group: row } = await requireGroup(r, ctx.actor, slug, ref, "read");
    const group = await loadGroup(r, org.id, row.name, ctx.deps);
    if (!group) throw coreErrors.groupNotFound();
    return group;
  });
}

/**
 * Deletes a group with all its databases and their files; unless keeping is off, the group and
 * the databases it takes along stay restorable together for the window (a restore of the group
 * brings them back, see databases/restore.ts).
 */
export async function deleteGroup(ctx: GroupCtx, slug: string, name: string): Promise<Group> {
  const { group, instances, keep } = await ctx.deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "group:delete");
    // The organization before the group (its counts change), as in every transaction.
    await r.organizations.lockAll([org.id]);
    const group = await loadGroup(r, org.id, name);
    if (!group) throw coreErrors.groupNotFound();
    if (group.deleteProtection) {
      throw groupErrors.deleteProtected(name);
    }
    const protectedDbs = (await r.databases.list(org.id, { groupId: group.id })).filter(
      (d) => d.delete_protection === 1,
    );
    if (protectedDbs.length > 0) {
      throw groupErrors.holdsProtected(name, protectedDbs.map((d) => d.name).join(", "));
    }
    const instances = await instancesOfGroup(r, group.id);
    // Primaries are removed here; other nodes drop their replicas when told.
    await requireFilesHere(
      r,
      ctx.deps,
      instances.filter((i) => i.primary).map((i) => i.location),
    );
    const keep = keepsDeleted(ctx.deps, org);
    if (keep) await keepGroup(r, ctx.deps, org.id, group);
    // Tokens restricted to the group go with it (Turso does the same on delete and transfer).
    await r.apiTokens.deleteForGroup(group.id);
    await r.groups.delete(group.id);
    await audit(r, ctx, org.id, "group-delete", `group ${name} deleted`, {
      group: name,
      ...(keep ? { restorable: true } : {}),
    });
    return { group, instances, keep };
  });
  await ctx.deps.instances.remove(instances, { keep });
  return group;
}

/** Records a group being deleted, and every database going with it, to be restorable together. */
async function keepGroup(r: Repos, deps: GroupCtx["deps"], orgId: string, group: Group): Promise<void> {
  const row = await r.groups.findById(group.id);
  if (!row) return;
  const now = deps.clock();
  await r.deletedGroups.insert({
    id: row.id,
    org_id: orgId,
    name: row.name,
    deleted_at: isoTime(now),
    purge_after: isoTime(new Date(now.getTime() + deps.deletedRetentionMs)),
    locations: JSON.stringify(group.locations),
    record: JSON.stringify(row),
  });
  for (const db of await r.databases.list(orgId, { groupId: group.id }))
    await keepDeleted(
      r,
      deps,
      db,
      { id: group.id, name: group.name, locations: group.locations },
      isoTime(now),
    );
}
