import { decodeStringCursor, type Page, type PageRequest, pageOf } from "../../lib/cursor.js";
import type { DatabaseFilter, DatabaseWithPlacement } from "../../store/databases.js";
import type { Repos } from "../../store/store.js";
import { requireFilesHere } from "../cluster/placement-tx.js";
import { requireDatabase, requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { keepsDeleted } from "../core/kept.js";
import { keepDeleted } from "../core/kept-tx.js";
import type { Ref } from "../core/ref.js";
import { databaseErrors } from "./errors.js";
import type { DatabaseCtx } from "./ports.js";
import { type Database, toDatabase } from "./views.js";

async function withLocations(
  r: Repos,
  deps: { dbDomain: string },
  rows: DatabaseWithPlacement[],
): Promise<Database[]> {
  const locations = await r.groups.locationsOf([...new Set(rows.map((d) => d.group_id))]);
  return rows.map((d) => toDatabase(d, locations.get(d.group_id) ?? [], deps.dbDomain));
}

export interface DatabaseListFilter {
  group?: string;
  /** Only databases of the group with this id (v3's `group_id`). */
  groupId?: string;
  /** Branches of this database (its id, or its name). */
  parent?: string;
  /** Databases following this schema database (by name). */
  schema?: string;
  /** Only schema databases. */
  schemasOnly?: boolean;
  /** Names containing this text, without regard to case. */
  search?: string;
}

/** An organization's databases by name, filtered, in pages when `page.limit` is set. */
export async function listDatabases(
  ctx: DatabaseCtx,
  slug: Ref,
  filter: DatabaseListFilter = {},
  page: PageRequest = {},
): Promise<Page<Database>> {
  const after = decodeStringCursor(page.cursor);
  return ctx.deps.store.read(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "read");
    const none = { items: [], next: null };
    // A group-scoped token sees its own group's databases only.
    const f: DatabaseFilter = { groupId: ctx.actor.groupId ?? undefined, after };
    // By name (v1's `group`) or by id (v3's `group_id`); a group that isn't there matches nothing.
    for (const [by, value] of [
      ["name", filter.group],
      ["id", filter.groupId],
    ] as const) {
      if (!value) continue;
      const g = by === "name" ? await r.groups.findByName(org.id, value) : await r.groups.findById(value);
      if (!g || g.org_id !== org.id || (f.groupId !== undefined && g.id !== f.groupId)) return none;
      f.groupId = g.id;
    }
    for (const [key, value] of [
      ["parentId", filter.parent],
      ["schemaId", filter.schema],
    ] as const) {
      if (!value) continue;
      const ref = (await r.databases.findById(value)) ?? (await r.databases.findByName(org.id, value));
      if (!ref || ref.org_id !== org.id) return none;
      f[key] = ref.id;
    }
    if (filter.schemasOnly) f.isSchema = true;
    if (filter.search) {
      const text = filter.search.toLowerCase();
      // Names hold only these characters, so other text matches nothing (and can't be a wildcard).
      if (!/^[a-z0-9-]+$/.test(text)) return none;
      f.nameContains = text;
    }
    if (page.limit !== undefined) f.limit = page.limit + 1;
    const rows = pageOf(await r.databases.list(org.id, f), page.limit, (d) => d.name);
    return { items: await withLocations(r, ctx.deps, rows.items), next: rows.next };
  });
}

export async function getDatabase(ctx: DatabaseCtx, slug: Ref, name: Ref): Promise<Database> {
  return ctx.deps.store.read(async (r) => {
    const { db: row } = await requireDatabase(r, ctx.actor, slug, name, "read");
    const [db] = await withLocations(r, ctx.deps, [row]);
    return db!;
  });
}

/**
 * Deletes a database; its files go once the deletion is committed. Unless the organization turned
 * keeping off (or the server keeps nothing), they are moved aside instead, restorable until the
 * window ends (restore.ts); the name is free at once either way.
 */
export async function deleteDatabase(ctx: DatabaseCtx, slug: Ref, ref: Ref): Promise<string> {
  const { name, dbId, primary, locations, keep } = await ctx.deps.store.write(async (r) => {
    const { org, db: row } = await requireDatabase(r, ctx.actor, slug, ref, "db:delete");
    const name = row.name;
    // Locked before the checks below, so a child committed meanwhile is seen (see commitCreate);
    // the organization first, as the deletion updates its count.
    await r.organizations.lockAll([org.id]);
    await r.databases.lock(row.id);
    if (row.delete_protection === 1) {
      throw databaseErrors.deleteProtected(name);
    }
    if (row.is_schema === 1) {
      const children = await r.databases.schemaChildren(row.id);
      if (children.length > 0) {
        throw databaseErrors.schemaFollowed(
          name,
          children.map((c) => c.name),
        );
      }
    }
    const group = await r.groups.findById(row.group_id);
    if (group?.delete_protection === 1) {
      throw databaseErrors.groupDeleteProtected(name, group.name);
    }
    const locations = (await r.groups.locationsOf([row.group_id])).get(row.group_id) ?? [];
    // Replicas other nodes keep are dropped by them when told (see replication/manager.ts).
    await requireFilesHere(r, ctx.deps, [row.primary_location]);
    const keep = keepsDeleted(ctx.deps, org);
    if (keep) await keepDeleted(r, ctx.deps, row, { id: row.group_id, name: row.group_name, locations });
    await r.databases.delete(row.id);
    await audit(r, ctx, org.id, "db-delete", `database ${name} deleted`, {
      database: name,
      ...(keep ? { restorable: true } : {}),
    });
    return {
      name,
      dbId: row.id,
      primary: row.primary_location,
      keep,
      locations: locations.map((l) => ({ location: l, primary: l === row.primary_location })),
    };
  });
  // An upload that was under way for it has nowhere to go.
  ctx.deps.uploads.discard(primary, dbId);
  await ctx.deps.instances.remove(
    locations.map(({ location, primary }) => ({ dbId, location, primary })),
    { keep },
  );
  return name;
}
