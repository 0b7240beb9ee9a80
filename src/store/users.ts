import { sql } from "kysely";
import type { Executor } from "./executor.js";
import type { UserRow } from "./schema.js";
import { guardUnique } from "./unique.js";

/** The advisory-lock key of first starts; any constant no other lock of the database uses. */
const BOOTSTRAP_LOCK = 0x5_40a1;

export function usersRepo(ex: Executor) {
  const { db, dialect } = ex;
  return {
    insert: (row: UserRow) => guardUnique(ex, "username", () => db.insertInto("users").values(row).execute()),

    findByUsername: (username: string) =>
      db.selectFrom("users").selectAll().where("username", "=", username).executeTakeFirst(),

    findById: (id: string) => db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst(),

    /** Users by username; `after` and `limit` cut one page (keyset on the username). */
    list: (page: { after?: string; limit?: number } = {}) => {
      let q = db.selectFrom("users").selectAll();
      if (page.after !== undefined) q = q.where("username", ">", page.after);
      if (page.limit !== undefined) q = q.limit(page.limit);
      return q.orderBy("username").execute();
    },

    countAdmins: async () => {
      const r = await db
        .selectFrom("users")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("is_admin", "=", 1)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    /** API tokens held by instance administrators, all of them together. */
    countAdminTokens: async () => {
      const r = await db
        .selectFrom("api_tokens as t")
        .innerJoin("users as u", "u.id", "t.user_id")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("u.is_admin", "=", 1)
        // Only unrestricted tokens can administer the instance.
        .where("t.org_id", "is", null)
        .where("t.group_id", "is", null)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    /**
     * Locks every administrator row until the transaction ends, so "is there another administrator"
     * checks of concurrent deletions run one after the other. SQLite runs one writer at a time already.
     */
    /** Serializes first starts of several nodes on one store (a transaction-scoped advisory lock). */
    lockBootstrap: async () => {
      if (dialect.kind === "postgres") {
        await sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`.execute(db);
      }
    },

    lockAdmins: async () => {
      if (dialect.kind === "postgres") {
        await sql`select id from users where is_admin = 1 order by id for update`.execute(db);
      }
    },

    delete: async (id: string) => {
      const r = await db.deleteFrom("users").where("id", "=", id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  };
}

export type UsersRepo = ReturnType<typeof usersRepo>;
