import { guardUnique } from "./dialect.js";
import type { Executor } from "./executor.js";
import type { UserRow } from "./schema.js";

export function usersRepo(ex: Executor) {
  const { db } = ex;
  return {
    insert: (row: UserRow) => guardUnique(ex, "username", () => db.insertInto("users").values(row).execute()),

    findByUsername: (username: string) =>
      db.selectFrom("users").selectAll().where("username", "=", username).executeTakeFirst(),

    findById: (id: string) => db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst(),

    list: () => db.selectFrom("users").selectAll().orderBy("username").execute(),

    countAdmins: async () => {
      const r = await db
        .selectFrom("users")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("is_admin", "=", 1)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    delete: async (id: string) => {
      const r = await db.deleteFrom("users").where("id", "=", id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  };
}

export type UsersRepo = ReturnType<typeof usersRepo>;
