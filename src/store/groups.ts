import { sql } from "kysely";
import type { Executor } from "./executor.js";
import type { GroupLocationRow, GroupRow } from "./schema.js";
import { guardUnique } from "./unique.js";

/** Finding groups and their locations. */
function groupReads(ex: Executor) {
  const { db } = ex;
  return {
    findByName: (orgId: string, name: string) =>
      db
        .selectFrom("groups")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("name", "=", name)
        .executeTakeFirst(),
    findById: (id: string) => db.selectFrom("groups").selectAll().where("id", "=", id).executeTakeFirst(),
    /**
     * An organization's groups by name; `after` and `limit` page through them by key (the
     * `(org_id, name)` unique index serves the filter and the order), `id` narrows to one group.
     */
    list: (orgId: string, filter: { id?: string; after?: string; limit?: number } = {}) => {
      let q = db.selectFrom("groups").selectAll().where("org_id", "=", orgId);
      if (filter.id !== undefined) q = q.where("id", "=", filter.id);
      if (filter.after !== undefined) q = q.where("name", ">", filter.after);
      if (filter.limit !== undefined) q = q.limit(filter.limit);
      return q.orderBy("name").execute();
    },
    /** Locations of each group, in the order they were added (the primary first). */
    locationsOf: async (groupIds: readonly string[]): Promise<Map<string, string[]>> => {
      const out = new Map<string, string[]>(groupIds.map((id) => [id, []]));
      if (groupIds.length === 0) return out;
      const rows = await db
        .selectFrom("group_locations")
        .select(["group_id", "location"])
        .where("group_id", "in", groupIds)
        .orderBy("group_id")
        .orderBy("position")
        .execute();
      for (const r of rows) out.get(r.group_id)?.push(r.location);
      return out;
    },
    nextLocationPosition: async (groupId: string) => {
      const r = await db
        .selectFrom("group_locations")
        .select((eb) => eb.fn.max("position").as("p"))
        .where("group_id", "=", groupId)
        .executeTakeFirst();
      return Number(r?.p ?? -1) + 1;
    },
  };
}

/** Creating, locking, changing and deleting groups and their locations. */
function groupWrites(ex: Executor) {
  const { db, dialect } = ex;
  return {
    insert: (row: GroupRow) =>
      guardUnique(ex, "group name", () => db.insertInto("groups").values(row).execute()),
    /**
     * Serialises changes to one group's placement (adding a location vs creating a database in it),
     * so a database created during an add-location can't miss the new location. SQLite already runs
     * one writer at a time; PostgreSQL needs the row lock.
     */
    /** Locks every group of an organization until the transaction ends, in id order. */
    lockAllOf: async (orgId: string) => {
      if (dialect.kind === "postgres") {
        await sql`select id from groups where org_id = ${orgId} order by id for update`.execute(db);
      }
    },
    lock: async (id: string) => {
      if (dialect.kind === "postgres") {
        await sql`select id from groups where id = ${id} for update`.execute(db);
      }
    },
    bumpTokenGeneration: (id: string) =>
      db
        .updateTable("groups")
        .set((eb) => ({ token_generation: eb("token_generation", "+", 1) }))
        .where("id", "=", id)
        .execute(),
    rename: (id: string, name: string) =>
      guardUnique(ex, "group name", () =>
        db.updateTable("groups").set({ name }).where("id", "=", id).execute(),
      ),
    /** Moves a group to another organization (its name must be free there). */
    moveTo: (id: string, orgId: string) =>
      guardUnique(ex, "group name", () =>
        db.updateTable("groups").set({ org_id: orgId }).where("id", "=", id).execute(),
      ),
    update: (id: string, patch: Partial<Pick<GroupRow, "archived" | "delete_protection">>) =>
      db.updateTable("groups").set(patch).where("id", "=", id).execute(),
    delete: (id: string) => db.deleteFrom("groups").where("id", "=", id).execute(),
    insertLocation: (row: GroupLocationRow) =>
      guardUnique(ex, "group location", () => db.insertInto("group_locations").values(row).execute()),
    deleteLocation: async (groupId: string, location: string) => {
      const r = await db
        .deleteFrom("group_locations")
        .where("group_id", "=", groupId)
        .where("location", "=", location)
        .executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  };
}

export function groupsRepo(ex: Executor) {
  return { ...groupReads(ex), ...groupWrites(ex) };
}

export type GroupsRepo = ReturnType<typeof groupsRepo>;
