import type { Insertable, Kysely } from "kysely";
import { sql } from "kysely";
import type { Executor } from "./executor.js";
import type { DatabaseRow, DatabasesTable, DB } from "./schema.js";
import { guardUnique } from "./unique.js";

/**
 * A database row with the names of its organization and group, as every reader needs them. The
 * optional fields are filled by every query; a row built by hand right after an insert may omit them.
 */
export interface DatabaseWithPlacement extends DatabaseRow {
  org_slug: string;
  group_name: string;
  primary_location: string;
  /** The group's archived flag: a database is archived with its group. */
  group_archived?: number;
  /** Name of the branch's source database, while it exists in the same organization. */
  parent_name?: string | null;
  /** Name of the schema database this one follows, while it exists in the same organization. */
  schema_name?: string | null;
}

/** What the data plane needs to serve a database: placement, settings and token generations. */
export interface DatabaseForDataPlane extends DatabaseWithPlacement {
  group_token_generation: number;
  /** The organization's quota blocks (its plan's quota used up with overages off). */
  org_blocked_reads: number;
  org_blocked_writes: number;
}

export type DatabasePatch = Partial<
  Pick<
    DatabaseRow,
    "size_limit" | "block_reads" | "block_writes" | "allow_attach" | "delete_protection" | "allowed_ips"
  >
>;

export interface DatabaseFilter {
  groupId?: string;
  /** Branches of this database. */
  parentId?: string;
  /** Databases following this schema database. */
  schemaId?: string;
  isSchema?: boolean;
  /** Names containing this text: lowercase letters, digits and dashes only (no LIKE wildcards). */
  nameContains?: string;
  /** Names after this one (a page's cursor). */
  after?: string;
  limit?: number;
}

/** Databases with their organization's slug, group's name and placement. */
function withPlacement(db: Kysely<DB>) {
  return (
    db
      .selectFrom("databases as d")
      .innerJoin("groups as g", "g.id", "d.group_id")
      .innerJoin("organizations as o", "o.id", "d.org_id")
      .selectAll("d")
      .select([
        "o.slug as org_slug",
        "g.name as group_name",
        "g.primary_location",
        "g.archived as group_archived",
      ])
      // Names of the parent and the schema database, by primary key for each row returned. (As
      // self-joins, a PostgreSQL planner with stale statistics nested-loops them over the whole
      // organization: quadratic in its databases.) Only same-organization names: a transferred
      // branch must not reveal another tenant's names.
      .select((eb) => [
        eb
          .selectFrom("databases as p")
          .select("p.name")
          .whereRef("p.id", "=", "d.parent_id")
          .whereRef("p.org_id", "=", "d.org_id")
          .as("parent_name"),
        eb
          .selectFrom("databases as s")
          .select("s.name")
          .whereRef("s.id", "=", "d.schema_id")
          .whereRef("s.org_id", "=", "d.org_id")
          .as("schema_name"),
      ])
  );
}

/** The same, with what the data plane checks on every request. */
function forDataPlane(db: Kysely<DB>) {
  return withPlacement(db).select([
    "g.token_generation as group_token_generation",
    "o.blocked_reads as org_blocked_reads",
    "o.blocked_writes as org_blocked_writes",
  ]) as unknown as ReturnType<typeof withPlacement>;
}

/** Finding databases: by name, id or hostname, for the data plane, and in pages. */
function databaseLookups(ex: Executor) {
  const { db } = ex;
  return {
    /** Looks a database up the way a data-plane request names it: by hostname label, or org and name. */
    findForDataPlane: (
      by: { label: string } | { orgSlug: string; name: string } | { id: string },
    ): Promise<DatabaseForDataPlane | undefined> => {
      let q = forDataPlane(db);
      if ("label" in by) q = q.where("d.hostname_label", "=", by.label);
      else if ("id" in by) q = q.where("d.id", "=", by.id);
      else q = q.where("o.slug", "=", by.orgSlug).where("d.name", "=", by.name);
      return q.executeTakeFirst() as Promise<DatabaseForDataPlane | undefined>;
    },

    findByName: (orgId: string, name: string): Promise<DatabaseWithPlacement | undefined> =>
      withPlacement(db).where("d.org_id", "=", orgId).where("d.name", "=", name).executeTakeFirst(),

    findById: (id: string): Promise<DatabaseWithPlacement | undefined> =>
      withPlacement(db).where("d.id", "=", id).executeTakeFirst(),

    /**
     * An organization's databases by name. `after` and `limit` page through them by key (the
     * `(org_id, name)` unique index serves both the filter and the order).
     */
    list: (orgId: string, filter: DatabaseFilter = {}): Promise<DatabaseWithPlacement[]> => {
      let q = withPlacement(db).where("d.org_id", "=", orgId);
      if (filter.groupId) q = q.where("d.group_id", "=", filter.groupId);
      if (filter.parentId) q = q.where("d.parent_id", "=", filter.parentId);
      if (filter.schemaId) q = q.where("d.schema_id", "=", filter.schemaId);
      if (filter.isSchema !== undefined) q = q.where("d.is_schema", "=", filter.isSchema ? 1 : 0);
      if (filter.nameContains) q = q.where("d.name", "like", `%${filter.nameContains}%`);
      if (filter.after !== undefined) q = q.where("d.name", ">", filter.after);
      if (filter.limit !== undefined) q = q.limit(filter.limit);
      return q.orderBy("d.name").execute();
    },
  };
}

/** What the store knows across databases: ids, instances, schema links, names and hostnames taken. */
function databaseFacts(ex: Executor) {
  const { db } = ex;
  return {
    idsInGroup: async (groupId: string) =>
      (await db.selectFrom("databases").select("id").where("group_id", "=", groupId).execute()).map(
        (r) => r.id,
      ),

    /** Every (database, location) pair the store says should exist; used to reconcile files on start. */
    allInstances: () =>
      db
        .selectFrom("databases as d")
        .innerJoin("group_locations as l", "l.group_id", "d.group_id")
        .innerJoin("groups as g", "g.id", "d.group_id")
        .select(["d.id as db_id", "l.location", "g.primary_location"])
        .execute(),

    /** Which of these names an organization's databases already use (for transfers into it). */
    namesTaken: async (orgId: string, names: readonly string[]): Promise<string[]> => {
      const out: string[] = [];
      for (let i = 0; i < names.length; i += 500) {
        const rows = await db
          .selectFrom("databases")
          .select("name")
          .where("org_id", "=", orgId)
          .where("name", "in", names.slice(i, i + 500))
          .execute();
        out.push(...rows.map((r) => r.name));
      }
      return out.sort();
    },

    /** Which of these hostname labels (`<db>-<org>`) some database already has. */
    labelsTaken: async (labels: readonly string[]): Promise<string[]> => {
      const out: string[] = [];
      for (let i = 0; i < labels.length; i += 500) {
        const rows = await db
          .selectFrom("databases")
          .select("hostname_label")
          .where("hostname_label", "in", labels.slice(i, i + 500))
          .execute();
        out.push(...rows.map((r) => r.hostname_label));
      }
      return out.sort();
    },

    /** Every schema database that has databases following it, in every organization. */
    schemaParents: (): Promise<DatabaseWithPlacement[]> =>
      withPlacement(db)
        .where("d.is_schema", "=", 1)
        .where((eb) =>
          eb.exists(eb.selectFrom("databases as c").select("c.id").whereRef("c.schema_id", "=", "d.id")),
        )
        .execute(),

    /** The databases following a schema database, wherever they are placed. */
    schemaChildren: (schemaId: string): Promise<DatabaseWithPlacement[]> =>
      withPlacement(db).where("d.schema_id", "=", schemaId).orderBy("d.name").execute(),
  };
}

/** Creating, changing, moving and deleting databases. */
function databaseWrites(ex: Executor) {
  const { db } = ex;
  return {
    /**
     * Moves databases to another organization (and group): their names must be free there, and
     * their hostnames (`<db>-<org>`) change with the organization's slug.
     */
    moveTo: (ids: readonly string[], target: { orgId: string; orgSlug: string; groupId: string }) =>
      ids.length === 0
        ? Promise.resolve()
        : guardUnique(ex, "database name", () =>
            db
              .updateTable("databases")
              .set((eb) => ({
                org_id: target.orgId,
                group_id: target.groupId,
                hostname_label: eb(eb.ref("name"), "||", `-${target.orgSlug}`),
              }))
              .where("id", "in", ids)
              .execute(),
          ),

    bumpTokenGeneration: (id: string) =>
      db
        .updateTable("databases")
        .set((eb) => ({ token_generation: eb("token_generation", "+", 1) }))
        .where("id", "=", id)
        .execute(),

    insert: (row: Insertable<DatabasesTable>) =>
      guardUnique(ex, "database name", () => db.insertInto("databases").values(row).execute()),

    /** Locks a database row until the transaction ends (PostgreSQL; SQLite has one writer). */
    lock: async (id: string) => {
      if (ex.dialect.kind === "postgres") {
        await sql`select id from databases where id = ${id} for update`.execute(db);
      }
    },

    update: async (id: string, patch: DatabasePatch) => {
      if (Object.keys(patch).length === 0) return;
      await db.updateTable("databases").set(patch).where("id", "=", id).execute();
    },

    delete: (id: string) => db.deleteFrom("databases").where("id", "=", id).execute(),

    /**
     * Moves a database created for an upload between its states: 1 waiting for the file, 2 while
     * one is being installed, 0 done. Changes nothing unless it is in one of `from`; returns
     * whether it changed.
     */
    setAwaitingUpload: async (id: string, to: 0 | 1 | 2, from: ReadonlyArray<0 | 1 | 2>) => {
      const r = await db
        .updateTable("databases")
        .set({ awaiting_upload: to })
        .where("id", "=", id)
        .where("awaiting_upload", "in", [...from])
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    /** Records that a database following a schema database has the parent's changes up to `seq`. */
    setSchemaSeq: async (id: string, seq: number) => {
      await db.updateTable("databases").set({ schema_seq: seq }).where("id", "=", id).execute();
    },
  };
}

export function databasesRepo(ex: Executor) {
  return { ...databaseLookups(ex), ...databaseFacts(ex), ...databaseWrites(ex) };
}

export type DatabasesRepo = ReturnType<typeof databasesRepo>;
