import { ConflictError, InvalidError, NotFoundError, UniqueViolationError } from "../errors.js";
import { decodeStringCursor, type Page, type PageRequest, pageOf } from "../lib/cursor.js";
import { newUuid } from "../lib/ids.js";
import { isoTime } from "../lib/time.js";
import type { DatabaseFilter, DatabaseWithPlacement } from "../store/databases.js";
import type { Repos } from "../store/store.js";
import { requireDatabase } from "./access.js";
import { audit } from "./audit.js";
import type { Ctx, Deps } from "./context.js";
import { buildReplicas, removeInstances } from "./instances.js";
import { checkDatabaseName, parseSizeLimit } from "./names.js";
import { requireQuota } from "./quotas.js";
import { requireGroupInScope, requireOrgAccess } from "./roles.js";
import { type Database, toDatabase } from "./views.js";

export interface CreateDatabaseInput {
  name: string;
  /** Group to create the database in; Turso's older clients omit it and mean `default`. */
  group?: string;
  /** The turso CLI always sends one (possibly empty); when set it must be a location of the group. */
  location?: string;
  sizeLimit?: string;
}

async function withLocations(r: Repos, deps: Deps, rows: DatabaseWithPlacement[]): Promise<Database[]> {
  const locations = await r.groups.locationsOf([...new Set(rows.map((d) => d.group_id))]);
  return rows.map((d) => toDatabase(d, locations.get(d.group_id) ?? [], deps.dbDomain));
}

/**
 * Core operation 1. The database row and the primary's libSQL file are created in one
 * transaction: if the file can't be created the row is rolled back, so a create either happens or
 * leaves nothing behind. Once committed, a replica is built in every other location of the group
 * (it copies the primary through the sync protocol, which needs the committed row); a replica that
 * can't be built now is logged and built by the next reconciliation, while the database serves.
 */
export async function createDatabase(ctx: Ctx, slug: string, input: CreateDatabaseInput): Promise<Database> {
  const sizeLimit = input.sizeLimit?.trim().toLowerCase() || null;
  if (sizeLimit !== null) parseSizeLimit(sizeLimit);
  const { deps } = ctx;
  const created = await deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "db:create");
    checkDatabaseName(input.name, org.slug);
    const group = await r.groups.findByName(org.id, input.group || "default");
    if (!group) throw new InvalidError("group not found");
    requireGroupInScope(ctx.actor, group.id, group.name);
    await requireQuota(r, org, "databases");
    await r.groups.lock(group.id);
    const locations = (await r.groups.locationsOf([group.id])).get(group.id) ?? [];
    if (input.location && !locations.includes(input.location)) {
      throw new InvalidError(`location ${input.location} is not part of group ${group.name}`);
    }
    const row = {
      id: newUuid(),
      org_id: org.id,
      group_id: group.id,
      name: input.name,
      size_limit: sizeLimit,
      block_reads: 0,
      block_writes: 0,
      allow_attach: 0,
      delete_protection: 0,
      created_at: isoTime(deps.clock()),
      hostname_label: `${input.name}-${org.slug}`,
      token_generation: 0,
      parent_id: null,
      branched_at: null,
      is_schema: 0,
      schema_id: null,
    };
    try {
      await r.databases.insert(row);
    } catch (e) {
      if (!(e instanceof UniqueViolationError)) throw e;
      if (await r.databases.findByName(org.id, input.name)) {
        throw new ConflictError(`database with name ${input.name} already exists`);
      }
      // Another organization's database has the same hostname (`a-b` + `c` vs `a` + `b-c`).
      throw new ConflictError(
        `database name ${input.name} is not available: the hostname ${row.hostname_label}.${deps.dbDomain} is taken`,
      );
    }
    await audit(r, ctx, org.id, "db-create", `database ${input.name} created in group ${group.name}`, {
      database: input.name,
      group: group.name,
    });
    deps.files.create(group.primary_location, row.id);
    const placed = {
      ...row,
      org_slug: org.slug,
      group_name: group.name,
      primary_location: group.primary_location,
    };
    return toDatabase(placed, locations, deps.dbDomain);
  });
  for (const location of created.locations) {
    if (location === created.primaryLocation) continue;
    await buildReplicas(deps, [created.id], location).catch((e: unknown) =>
      deps.log.error(
        { err: e, dbId: created.id, location },
        "could not build a replica; reconciliation will retry",
      ),
    );
  }
  return created;
}

export interface DatabaseListFilter {
  group?: string;
  /** Branches of this database (its id, or its name). */
  parent?: string;
  /** Databases following this schema database (by name). */
  schema?: string;
  /** Only schema databases. */
  schemasOnly?: boolean;
}

/** An organization's databases by name, filtered, in pages when `page.limit` is set. */
export async function listDatabases(
  ctx: Ctx,
  slug: string,
  filter: DatabaseListFilter = {},
  page: PageRequest = {},
): Promise<Page<Database>> {
  const after = decodeStringCursor(page.cursor);
  return ctx.deps.store.read(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "read");
    const none = { items: [], next: null };
    // A group-scoped token sees its own group's databases only.
    const f: DatabaseFilter = { groupId: ctx.actor.groupId ?? undefined, after };
    if (filter.group) {
      const g = await r.groups.findByName(org.id, filter.group);
      if (!g || (f.groupId !== undefined && g.id !== f.groupId)) return none;
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
    if (page.limit !== undefined) f.limit = page.limit + 1;
    const rows = pageOf(await r.databases.list(org.id, f), page.limit, (d) => d.name);
    return { items: await withLocations(r, ctx.deps, rows.items), next: rows.next };
  });
}

export async function getDatabase(ctx: Ctx, slug: string, name: string): Promise<Database> {
  return ctx.deps.store.read(async (r) => {
    const { db: row } = await requireDatabase(r, ctx.actor, slug, name, "read");
    const [db] = await withLocations(r, ctx.deps, [row]);
    return db!;
  });
}

/** Deletes a database; its files go once the deletion is committed. */
export async function deleteDatabase(ctx: Ctx, slug: string, name: string): Promise<void> {
  const { dbId, locations } = await ctx.deps.store.write(async (r) => {
    const { org, db: row } = await requireDatabase(r, ctx.actor, slug, name, "db:delete");
    if (row.delete_protection === 1) {
      throw new InvalidError(
        `database ${name} is protected against deletion; turn delete_protection off first`,
      );
    }
    const locations = (await r.groups.locationsOf([row.group_id])).get(row.group_id) ?? [];
    await r.databases.delete(row.id);
    await audit(r, ctx, org.id, "db-delete", `database ${name} deleted`, { database: name });
    return {
      dbId: row.id,
      locations: locations.map((l) => ({ location: l, primary: l === row.primary_location })),
    };
  });
  await removeInstances(
    ctx.deps,
    locations.map(({ location, primary }) => ({ dbId, location, primary })),
  );
}
