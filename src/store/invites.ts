import type { Insertable } from "kysely";
import { guardUnique } from "./dialect.js";
import type { Executor } from "./executor.js";
import type { InvitesTable } from "./schema.js";

export function invitesRepo(ex: Executor) {
  const { db } = ex;
  const pending = () => db.selectFrom("invites").selectAll().where("accepted_at", "is", null);
  return {
    insert: async (row: Insertable<InvitesTable>) => {
      const r = await guardUnique(ex, "invite token", () =>
        db.insertInto("invites").values(row).returning("id").executeTakeFirstOrThrow(),
      );
      return Number(r.id);
    },

    /** Pending invites of an organization, oldest first. */
    listPending: (orgId: string) => pending().where("org_id", "=", orgId).orderBy("id").execute(),

    findPending: (id: number) => pending().where("id", "=", id).executeTakeFirst(),

    /** Pending invites addressed to a user, by username or email. */
    pendingFor: (username: string, email: string) =>
      pending()
        .where((eb) => eb.or([eb("username", "=", username), eb("email", "=", email)]))
        .orderBy("id")
        .execute(),

    countPendingFor: async (username: string, email: string) => {
      const r = await db
        .selectFrom("invites")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("accepted_at", "is", null)
        .where((eb) => eb.or([eb("username", "=", username), eb("email", "=", email)]))
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    /** Deletes the pending invite of an organization for an email or username; true if there was one. */
    deletePending: async (orgId: string, emailOrUsername: string) => {
      const r = await db
        .deleteFrom("invites")
        .where("org_id", "=", orgId)
        .where("accepted_at", "is", null)
        .where((eb) => eb.or([eb("email", "=", emailOrUsername), eb("username", "=", emailOrUsername)]))
        .executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    deleteById: (id: number) => db.deleteFrom("invites").where("id", "=", id).execute(),

    markAccepted: (id: number, at: string) =>
      db.updateTable("invites").set({ accepted_at: at }).where("id", "=", id).execute(),
  };
}

export type InvitesRepo = ReturnType<typeof invitesRepo>;
