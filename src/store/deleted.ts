import type { Insertable } from "kysely";
import type { Executor } from "./executor.js";
import type {
  DeletedDatabaseRow,
  DeletedDatabasesTable,
  DeletedGroupRow,
  DeletedGroupsTable,
} from "./schema.js";

/** Deleted databases kept restorable, newest first within an organization. */
export function deletedDatabasesRepo(ex: Executor) {
  const { db } = ex;
  return {
    insert: (row: Insertable<DeletedDatabasesTable>) =>
      db.insertInto("deleted_databases").values(row).execute(),

    findById: (id: string): Promise<DeletedDatabaseRow | undefined> =>
      db.selectFrom("deleted_databases").selectAll().where("id", "=", id).executeTakeFirst(),

    /** Locks the row for a restore, so two restores of one database can't both go through. */
    lock: async (id: string): Promise<DeletedDatabaseRow | undefined> => {
      const q = db.selectFrom("deleted_databases").selectAll().where("id", "=", id);
      return (ex.dialect.kind === "postgres" ? q.forUpdate() : q).executeTakeFirst();
    },

    /** An organization's, optionally of one group, by deletion time (newest first) then id; `after` pages. */
    list: (
      orgId: string,
      opts: { groupId?: string; limit?: number; after?: { at: string; id: string } } = {},
    ) => {
      let q = db.selectFrom("deleted_databases").selectAll().where("org_id", "=", orgId);
      if (opts.groupId) q = q.where("group_id", "=", opts.groupId);
      if (opts.after) {
        const { at, id } = opts.after;
        q = q.where((eb) =>
          eb.or([eb("deleted_at", "<", at), eb.and([eb("deleted_at", "=", at), eb("id", ">", id)])]),
        );
      }
      q = q.orderBy("deleted_at", "desc").orderBy("id", "asc");
      return (opts.limit !== undefined ? q.limit(opts.limit) : q).execute();
    },

    /** Those that went with a group deletion of that group. */
    ofDeletedGroup: (groupId: string): Promise<DeletedDatabaseRow[]> =>
      db
        .selectFrom("deleted_databases")
        .selectAll()
        .where("group_id", "=", groupId)
        .where("group_deleted_at", "is not", null)
        .execute(),

    /** Bytes the organization's kept databases take (they count against its storage). */
    keptBytes: async (orgId: string): Promise<number> => {
      const r = await db
        .selectFrom("deleted_databases")
        .select((eb) => eb.fn.sum<number | string | null>("kept_bytes").as("n"))
        .where("org_id", "=", orgId)
        .executeTakeFirst();
      return Number(r?.n ?? 0);
    },

    /** Every kept database's id and where its files are, for the start-up check of this node's files. */
    allPlaces: (): Promise<Array<{ id: string; primary_location: string }>> =>
      db.selectFrom("deleted_databases").select(["id", "primary_location"]).execute(),

    /** Rows whose window ended by `now` (ISO). */
    expired: (now: string): Promise<DeletedDatabaseRow[]> =>
      db.selectFrom("deleted_databases").selectAll().where("purge_after", "<=", now).execute(),

    /** Whether there was one to remove (a restore or another sweep may have taken it first). */
    remove: async (id: string): Promise<boolean> => {
      const r = await db.deleteFrom("deleted_databases").where("id", "=", id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  };
}

/** Deleted groups kept restorable. */
export function deletedGroupsRepo(ex: Executor) {
  const { db } = ex;
  return {
    insert: (row: DeletedGroupsTable) => db.insertInto("deleted_groups").values(row).execute(),

    findById: (id: string): Promise<DeletedGroupRow | undefined> =>
      db.selectFrom("deleted_groups").selectAll().where("id", "=", id).executeTakeFirst(),

    lock: async (id: string): Promise<DeletedGroupRow | undefined> => {
      const q = db.selectFrom("deleted_groups").selectAll().where("id", "=", id);
      return (ex.dialect.kind === "postgres" ? q.forUpdate() : q).executeTakeFirst();
    },

    list: (orgId: string): Promise<DeletedGroupRow[]> =>
      db
        .selectFrom("deleted_groups")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("deleted_at", "desc")
        .orderBy("id", "asc")
        .execute(),

    expired: (now: string): Promise<DeletedGroupRow[]> =>
      db.selectFrom("deleted_groups").selectAll().where("purge_after", "<=", now).execute(),

    remove: (id: string) => db.deleteFrom("deleted_groups").where("id", "=", id).execute(),
  };
}

export type DeletedDatabasesRepo = ReturnType<typeof deletedDatabasesRepo>;
export type DeletedGroupsRepo = ReturnType<typeof deletedGroupsRepo>;
