import { guardUnique } from "./dialect.js";
import type { Executor } from "./executor.js";
import type { MemberRow } from "./schema.js";

export interface MemberWithUser {
  user_id: string;
  username: string;
  email: string;
  role: MemberRow["role"];
  created_at: string;
}

export function membersRepo(ex: Executor) {
  const { db } = ex;
  return {
    insert: (row: MemberRow) =>
      guardUnique(ex, "membership", () => db.insertInto("members").values(row).execute()),

    find: (orgId: string, userId: string) =>
      db
        .selectFrom("members")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("user_id", "=", userId)
        .executeTakeFirst(),

    list: (orgId: string): Promise<MemberWithUser[]> =>
      db
        .selectFrom("members as m")
        .innerJoin("users as u", "u.id", "m.user_id")
        .select(["m.user_id", "u.username", "u.email", "m.role", "m.created_at"])
        .where("m.org_id", "=", orgId)
        .orderBy("u.username")
        .execute(),

    setRole: (orgId: string, userId: string, role: MemberRow["role"]) =>
      db
        .updateTable("members")
        .set({ role })
        .where("org_id", "=", orgId)
        .where("user_id", "=", userId)
        .execute(),

    countOwners: async (orgId: string) => {
      const r = await db
        .selectFrom("members")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("org_id", "=", orgId)
        .where("role", "=", "owner")
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    /** Team organizations in which this user is the only owner. */
    teamOrgsSolelyOwnedBy: (userId: string) =>
      db
        .selectFrom("organizations as o")
        .innerJoin("members as m", "m.org_id", "o.id")
        .select(["o.id", "o.slug"])
        .where("o.type", "=", "team")
        .where("m.user_id", "=", userId)
        .where("m.role", "=", "owner")
        .where((eb) =>
          eb(
            eb
              .selectFrom("members as m2")
              .select((e2) => e2.fn.countAll<number>().as("n"))
              .whereRef("m2.org_id", "=", "o.id")
              .where("m2.role", "=", "owner"),
            "=",
            1,
          ),
        )
        .execute(),

    delete: async (orgId: string, userId: string) => {
      const r = await db
        .deleteFrom("members")
        .where("org_id", "=", orgId)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  };
}

export type MembersRepo = ReturnType<typeof membersRepo>;
