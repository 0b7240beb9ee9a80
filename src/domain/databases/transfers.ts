import { ForbiddenError } from "../../errors.js";
import { newUuid } from "../../lib/ids.js";
import { echoable } from "../../lib/loggable-path.js";
import { isoTime } from "../../lib/time.js";
import type { DatabaseWithPlacement } from "../../store/databases.js";
import type { GroupRow, OrganizationRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import { requireFilesHere } from "../cluster/placement-tx.js";
import { requireDatabase, requireGroup, requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { coreErrors } from "../core/errors.js";
import { checkDatabaseName } from "../core/names.js";
import { type Group, statusOf, toGroup } from "../groups/views.js";
import { requireQuota } from "../plans/quota-tx.js";
import { databaseErrors } from "./errors.js";
import type { DatabaseCtx } from "./ports.js";
import { buildReplicasAfter } from "./replicas.js";
import { type Database, toDatabase } from "./views.js";

/**
 * Moving groups and databases to another organization. Files are named by location and database
 * id, never by organization or name, so a transfer moves rows only: no file is copied. What changes
 * is ownership, names and hostnames (`<db>-<org>` follows the new slug), so credentials minted in
 * the old organization stop working: SQL tokens of the moved databases are rotated and API tokens
 * restricted to a moved group are revoked.
 */

/** The organization to transfer to, once the caller is an owner or admin there. */
async function requireTarget(
  r: Repos,
  ctx: DatabaseCtx,
  from: OrganizationRow,
  slug: string,
): Promise<OrganizationRow> {
  if (slug === "") throw databaseErrors.transferTargetMissing();
  if (slug === from.slug) throw databaseErrors.alreadyInOrganization(slug);
  try {
    return (await requireOrgAccess(r, ctx.actor, slug, "group:transfer")).org;
  } catch (e) {
    // Not a 403: the turso CLI reads any 403 as "you are not a member of your current
    // organization" and switches itself to the personal one. Unknown and foreign organizations get
    // the same answer, so names can't be probed.
    if (e instanceof ForbiddenError) {
      throw databaseErrors.transferTargetRefused(slug);
    }
    throw e;
  }
}

/** Refuses to split a schema database from the databases that follow it. */
async function requireSchemaLinksInside(
  r: Repos,
  org: OrganizationRow,
  moving: readonly DatabaseWithPlacement[],
): Promise<void> {
  const ids = new Set(moving.map((d) => d.id));
  for (const d of moving) {
    if (d.schema_id !== null && !ids.has(d.schema_id)) {
      throw databaseErrors.schemaStaysBehind(d.name, d.schema_name ?? d.schema_id);
    }
    if (d.is_schema === 1) {
      const left = (await r.databases.list(org.id, { schemaId: d.id })).filter((c) => !ids.has(c.id));
      if (left.length > 0) {
        throw databaseErrors.followersStayBehind(d.name, left.map((c) => c.name).join(", "));
      }
    }
  }
}

/** Refuses names and hostnames the target organization can't take. */
async function requireRoomFor(
  r: Repos,
  target: OrganizationRow,
  moving: readonly DatabaseWithPlacement[],
): Promise<void> {
  for (const d of moving) checkDatabaseName(d.name, target.slug);
  const names = await r.databases.namesTaken(
    target.id,
    moving.map((d) => d.name),
  );
  if (names.length > 0) {
    throw databaseErrors.namesTakenInTarget(target.slug, names.join(", "));
  }
  const labels = await r.databases.labelsTaken(moving.map((d) => `${d.name}-${target.slug}`));
  if (labels.length > 0) {
    throw databaseErrors.hostnamesTaken(labels.join(", "));
  }
}

/** A target's plan must have room for the locations it doesn't use yet. */
async function requireLocationsQuota(r: Repos, org: OrganizationRow, locations: readonly string[]) {
  let adding = 0;
  for (const l of locations) if (!(await r.plans.usesLocation(org.id, l))) adding++;
  await requireQuota(r, org, "locations", adding);
}

async function locationsOf(r: Repos, groupId: string): Promise<string[]> {
  return (await r.groups.locationsOf([groupId])).get(groupId) ?? [];
}

/**
 * `POST .../groups/{g}/transfer`: moves a group with all its databases, locations and files to
 * another organization. The caller must be an owner or admin of both.
 */
export async function transferGroup(
  ctx: DatabaseCtx,
  slug: string,
  name: string,
  targetSlug: string,
): Promise<Group> {
  const moved = await ctx.deps.store.write(async (r) => {
    const { org, group: found } = await requireGroup(r, ctx.actor, slug, name, "group:transfer");
    const target = await requireTarget(r, ctx, org, targetSlug);
    // Organizations before groups, as everywhere (see organizations.lockAll).
    await r.organizations.lockAll([org.id, target.id]);
    await r.groups.lock(found.id);
    // Re-read under the lock: a concurrent transfer or rename may have won.
    const group = await r.groups.findById(found.id);
    if (!group || group.org_id !== org.id || group.name !== name) throw coreErrors.groupNotFound();
    if (await r.groups.findByName(target.id, name)) {
      throw databaseErrors.groupExistsInTarget(name, target.slug);
    }
    const dbs = await r.databases.list(org.id, { groupId: group.id });
    await requireSchemaLinksInside(r, org, dbs);
    await requireRoomFor(r, target, dbs);
    const locations = await locationsOf(r, group.id);
    await requireQuota(r, target, "groups");
    await requireQuota(r, target, "databases", dbs.length);
    await requireLocationsQuota(r, target, locations);

    await r.groups.moveTo(group.id, target.id);
    await r.databases.moveTo(
      dbs.map((d) => d.id),
      { orgId: target.id, orgSlug: target.slug, groupId: group.id },
    );
    await r.apiTokens.deleteForGroup(group.id);
    // Every database token also carries the group's generation: this retires them all.
    await r.groups.bumpTokenGeneration(group.id);
    const data = { group: name, from: org.slug, to: target.slug, databases: dbs.map((d) => d.name) };
    await auditBothSides(r, ctx, { from: org, to: target }, "group-transfer", `group ${name}`, data);
    return toGroup({ ...group, org_id: target.id }, locations, statusOf(ctx.deps));
  });
  ctx.deps.directory.invalidate();
  return moved;
}

/** Finds or makes the group a transferred database lands in; see `transferDatabase`. */
async function landingGroup(
  r: Repos,
  ctx: DatabaseCtx,
  target: OrganizationRow,
  db: DatabaseWithPlacement,
  locations: readonly string[],
): Promise<{ group: GroupRow; locations: string[] }> {
  const existing = await r.groups.findByName(target.id, db.group_name);
  if (existing) {
    await r.groups.lock(existing.id);
    if (existing.primary_location !== db.primary_location) {
      throw databaseErrors.landingGroupElsewhere(
        db.name,
        existing.name,
        target.slug,
        existing.primary_location,
        db.primary_location,
      );
    }
    return { group: existing, locations: await locationsOf(r, existing.id) };
  }
  await requireQuota(r, target, "groups");
  await requireLocationsQuota(r, target, locations);
  const now = isoTime(ctx.deps.clock());
  const group: GroupRow = {
    id: newUuid(),
    org_id: target.id,
    name: db.group_name,
    primary_location: db.primary_location,
    archived: 0,
    delete_protection: 0,
    created_at: now,
    token_generation: 0,
  };
  await r.groups.insert(group);
  for (const [position, location] of locations.entries()) {
    await r.groups.insertLocation({ group_id: group.id, location, position, added_at: now });
  }
  await audit(
    r,
    ctx,
    target.id,
    "group-create",
    `group ${group.name} created in ${group.primary_location} to receive database ${db.name}`,
    { group: group.name, location: group.primary_location },
  );
  return { group, locations: [...locations] };
}

/**
 * `POST .../databases/{db}/transfer` (the turso CLI's `org db-transfer`): moves one database to
 * another organization, into the group of the same name there. When the target has no such group,
 * one is made with the same locations, so nothing has to move. When it has one, its primary
 * location must be the database's (the primary's file stays where it is); replicas are then built
 * in the locations that group adds and removed from those it lacks. The caller must be an owner
 * or admin of both organizations.
 */
export async function transferDatabase(
  ctx: DatabaseCtx,
  slug: string,
  name: string,
  targetSlug: string,
): Promise<Database> {
  const { deps } = ctx;
  const plan = await deps.store.write(async (r) => {
    const { org, role, db: found } = await requireDatabase(r, ctx.actor, slug, name, "db:configure");
    if (role !== "owner" && role !== "admin") {
      throw databaseErrors.onlyAdminsTransfer();
    }
    const target = await requireTarget(r, ctx, org, targetSlug);
    await r.organizations.lockAll([org.id, target.id]);
    await r.groups.lock(found.group_id);
    // Read again under the locks: a concurrent transfer or deletion may have won.
    const db = await r.databases.findById(found.id);
    if (!db || db.org_id !== org.id || db.group_id !== found.group_id)
      throw coreErrors.databaseNotFound(echoable(name));
    await requireSchemaLinksInside(r, org, [db]);
    await requireRoomFor(r, target, [db]);
    await requireQuota(r, target, "databases");
    const from = await locationsOf(r, db.group_id);
    const landing = await landingGroup(r, ctx, target, db, from);
    await r.databases.moveTo([db.id], { orgId: target.id, orgSlug: target.slug, groupId: landing.group.id });
    await r.databases.bumpTokenGeneration(db.id);
    const data = { database: name, from: org.slug, to: target.slug, group: landing.group.name };
    await auditBothSides(r, ctx, { from: org, to: target }, "db-transfer", `database ${name}`, data);
    await requireFilesHere(r, deps, [...from, ...landing.locations]);
    const moved = await r.databases.findById(db.id);
    return {
      database: toDatabase(moved!, landing.locations, deps.dbDomain),
      added: landing.locations.filter((l) => !from.includes(l)),
      dropped: from.filter((l) => !landing.locations.includes(l)),
    };
  });
  deps.directory.invalidate();
  const id = plan.database.id;
  await deps.instances.remove(plan.dropped.map((location) => ({ dbId: id, location, primary: false })));
  await buildReplicasAfter(deps, id, plan.added);
  return plan.database;
}

/** A transfer shows in both organizations' audit logs, each saying where the thing went or came from. */
async function auditBothSides(
  r: Repos,
  ctx: DatabaseCtx,
  orgs: { from: { id: string; slug: string }; to: { id: string; slug: string } },
  code: string,
  what: string,
  data: Record<string, unknown>,
): Promise<void> {
  await audit(r, ctx, orgs.from.id, code, `${what} transferred to organization ${orgs.to.slug}`, data);
  await audit(r, ctx, orgs.to.id, code, `${what} transferred from organization ${orgs.from.slug}`, data);
}
