import { UniqueViolationError } from "../../errors.js";
import { decodeStringCursor, type Page, type PageRequest, pageOf } from "../../lib/cursor.js";
import { isoTime } from "../../lib/time.js";
import type { DeletedDatabaseRow, OrganizationRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import { requireFilesHere } from "../cluster/placement-tx.js";
import { requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { keptRow } from "../core/kept.js";
import { checkDatabaseName } from "../core/names.js";
import type { Ref } from "../core/ref.js";
import { requireQuota } from "../plans/quota-tx.js";
import { databaseErrors, restoreErrors } from "./errors.js";
import type { DatabaseCtx } from "./ports.js";
import { buildReplicasAfter } from "./replicas.js";
import { type Database, toDatabase } from "./views.js";

/** A deleted database that can still be restored: as it was, with when it went and until when it stays. */
export interface DeletedDatabase extends Database {
  deletedAt: string;
  /** Set when it went with its group. */
  groupDeletedAt: string | null;
  restorableUntil: string;
}

/** The view of a kept database: its row as it was, placed where it was. */
export function deletedView(d: DeletedDatabaseRow, orgSlug: string, dbDomain: string): DeletedDatabase {
  const row = keptRow(d.record);
  const placed = {
    ...row,
    org_slug: orgSlug,
    group_name: d.group_name,
    primary_location: d.primary_location,
  };
  return {
    ...toDatabase(placed, JSON.parse(d.locations) as string[], dbDomain),
    deletedAt: d.deleted_at,
    groupDeletedAt: d.group_deleted_at,
    restorableUntil: d.purge_after,
  };
}

/** The key of a deleted database in the list's order (newest first): when, then id. */
const keyOf = (d: DeletedDatabaseRow) => `${d.deleted_at}|${d.id}`;

/** An organization's deleted databases that can still be restored, newest first, in pages. */
export async function listDeletedDatabases(
  ctx: DatabaseCtx,
  slug: Ref,
  filter: { groupId?: string } = {},
  page: PageRequest = {},
): Promise<Page<DeletedDatabase>> {
  const cursor = decodeStringCursor(page.cursor);
  const [at, id] = cursor?.split("|") ?? [];
  return ctx.deps.store.read(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "read");
    // A token limited to one group sees that group's, as with live databases.
    const groupId = ctx.actor.groupId ?? filter.groupId;
    if (ctx.actor.groupId && filter.groupId && filter.groupId !== ctx.actor.groupId)
      return { items: [], next: null };
    const rows = await r.deletedDatabases.list(org.id, {
      ...(groupId ? { groupId } : {}),
      ...(page.limit !== undefined ? { limit: page.limit + 1 } : {}),
      ...(at !== undefined && id !== undefined ? { after: { at, id } } : {}),
    });
    const cut = pageOf(rows, page.limit, keyOf);
    return { items: cut.items.map((d) => deletedView(d, org.slug, ctx.deps.dbDomain)), next: cut.next };
  });
}

/**
 * Brings a deleted database back exactly as it was (rows, history, settings, encryption), under
 * its old name or `name`. Tokens minted before the deletion stay refused: the restored database
 * starts a new token generation, so clients need new tokens, as on Turso. The row goes back in one
 * transaction; the files are moved back after it commits, and should that fail the database is
 * deleted (and kept) again, so nothing is lost either way.
 */
export async function restoreDatabase(
  ctx: DatabaseCtx,
  slug: Ref,
  id: string,
  opts: { name?: string } = {},
): Promise<Database> {
  const { deps } = ctx;
  const done = await deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "org:restore");
    await r.organizations.lockAll([org.id]);
    return putBack(r, ctx, org, id, opts.name);
  });
  await bringFilesBack(ctx, done.kept, done.name);
  deps.directory.invalidate();
  // A schema database's followers, or a follower, get the schema changes made meanwhile.
  if (done.database.isSchema) deps.schema.propagate(id);
  else if (done.schemaId) deps.schema.propagate(done.schemaId);
  await buildReplicasAfter(deps, id, done.database.locations, done.database.primaryLocation);
  return done.database;
}

/**
 * Inside a restore's transaction (the organization locked): checks the kept database can come
 * back and puts its row back, as it was but for its name and a new token generation.
 */
async function putBack(r: Repos, ctx: DatabaseCtx, org: OrganizationRow, id: string, name?: string) {
  const { deps } = ctx;
  const kept = await r.deletedDatabases.lock(id);
  if (!kept || kept.org_id !== org.id || kept.purge_after <= isoTime(deps.clock()))
    throw restoreErrors.noDeletedDatabase(id);
  if (org.restore_enabled !== 1) throw restoreErrors.recoveryOff(org.slug);
  const group = await r.groups.findById(kept.group_id);
  // A group transferred to another organization since is not this organization's to put it in.
  if (!group || group.org_id !== org.id)
    throw restoreErrors.groupGone(kept.name, kept.group_name, kept.group_deleted_at !== null && !group);
  const newName = name ?? kept.name;
  if (name !== undefined) checkDatabaseName(name, org.slug);
  if (await r.databases.findByName(org.id, newName)) throw restoreErrors.nameTaken(newName);
  await requireQuota(r, org, "databases");
  await requireFilesHere(r, deps, [kept.primary_location]);
  if (group.primary_location !== kept.primary_location)
    throw restoreErrors.primaryMoved(kept.name, kept.primary_location, group.primary_location);
  const row = keptRow(kept.record);
  const schemaKept = row.schema_id ? await r.databases.findById(row.schema_id) : undefined;
  const restored = {
    ...row,
    name: newName,
    hostname_label: `${newName}-${org.slug}`,
    // Tokens of the database as it was stay refused (AUTH_JWT_REVOKED): mint new ones.
    token_generation: row.token_generation + 1,
    // A schema database deleted meanwhile can't be followed any more.
    schema_id: schemaKept ? row.schema_id : null,
  };
  try {
    await r.databases.insert(restored);
  } catch (e) {
    if (!(e instanceof UniqueViolationError)) throw e;
    throw databaseErrors.hostnameTaken(newName, restored.hostname_label, deps.dbDomain);
  }
  await r.deletedDatabases.remove(id);
  await audit(r, ctx, org.id, "db-restore", `database ${newName} restored`, {
    database: newName,
    ...(newName !== kept.name ? { deleted_as: kept.name } : {}),
  });
  const locations = (await r.groups.locationsOf([group.id])).get(group.id) ?? [];
  const placed = {
    ...restored,
    org_slug: org.slug,
    group_name: group.name,
    primary_location: group.primary_location,
  };
  return {
    kept,
    name: newName,
    schemaId: restored.schema_id,
    database: toDatabase(placed, locations, deps.dbDomain),
  };
}

/** Moves the kept files back; on failure the database goes back to being deleted and kept. */
async function bringFilesBack(ctx: DatabaseCtx, kept: DeletedDatabaseRow, name: string): Promise<void> {
  try {
    ctx.deps.instances.restoreKept(kept.primary_location, kept.id);
  } catch (e) {
    ctx.deps.log.error({ err: e, dbId: kept.id }, "could not move a restored database's files back");
    await ctx.deps.store.write(async (r) => {
      await r.databases.delete(kept.id);
      await r.deletedDatabases.insert(kept);
    });
    throw restoreErrors.filesMissing(name, e instanceof Error ? e.message : String(e));
  }
}
