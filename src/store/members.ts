import { sql } from "kysely";
import type { Executor } from "./executor.js";
import type { MemberRow } from "./schema.js";
import { guardUnique } from "./unique.js";

export interface MemberWithUser {
  user_id: string;
  username: string;
  email: string;
  role: MemberRow["role"];
  created_at: string;
}

/** Finding members and counting owners. */
function memberReads(ex: Executor) {
  const { db } = ex;
  const withUser = () =>
    db
      .selectFrom("members as m")
      .innerJoin("users as u", "u.id", "m.user_id")
      .select(["m.user_id", "u.username", "u.email", "m.role", "m.created_at"]);
  return {
    find: (orgId: string, userId: string) =>
      db
        .selectFrom("members")
        .selectAll()
        .where("org_id", "=", orgId)
        .where("user_id", "=", userId)
        .executeTakeFirst(),
    /** Members by username; `after` and `limit` cut one page (keyset on the username). */
    list: (orgId: string, page: { after?: string; limit?: number } = {}): Promise<MemberWithUser[]> => {
      let q = withUser().where("m.org_id", "=", orgId);
      if (page.after !== undefined) q = q.where("u.username", ">", page.after);
      if (page.limit !== undefined) q = q.limit(page.limit);
      return q.orderBy("u.username").execute();
    },
    findByUsername: (orgId: string, username: string): Promise<MemberWithUser | undefined> =>
      withUser().where("m.org_id", "=", orgId).where("u.username", "=", username).executeTakeFirst(),
    /** A member whose email is this one (compared without case). */
    findByEmail: (orgId: string, email: string): Promise<MemberWithUser | undefined> =>
      withUser()
        .where("m.org_id", "=", orgId)
        .where((eb) => eb(eb.fn("lower", ["u.email"]), "=", email.toLowerCase()))
        .executeTakeFirst(),
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
  };
}

/** Adding, changing and removing members. */
function memberWrites(ex: Executor) {
  const { db, dialect } = ex;
  return {
    insert: (row: MemberRow) =>
      guardUnique(ex, "membership", () => db.insertInto("members").values(row).execute()),
    setRole: (orgId: string, userId: string, role: MemberRow["role"]) =>
      db
        .updateTable("members")
        .set({ role })
        .where("org_id", "=", orgId)
        .where("user_id", "=", userId)
        .execute(),
    /**
     * Locks the team organizations this user owns until the transaction ends, so a check that
     * they keep another owner can't race a concurrent removal or demotion of that owner (which
     * locks the organization row too). SQLite runs one writer at a time already.
     */
    lockOrganizationsOwnedBy: async (userId: string) => {
      if (dialect.kind !== "postgres") return;
      await sql`select id from organizations where id in (select org_id from members where user_id = ${userId} and role = 'owner') order by id for update`.execute(
        db,
      );
    },
    /** Revokes a user's API tokens restricted to an organization (they left it). */
    deleteTokensIn: async (orgId: string, userId: string) => {
      const r = await db
        .deleteFrom("api_tokens")
        .where("org_id", "=", orgId)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
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

export function membersRepo(ex: Executor) {
  return { ...memberReads(ex), ...memberWrites(ex) };
}

export type MembersRepo = ReturnType<typeof membersRepo>;
