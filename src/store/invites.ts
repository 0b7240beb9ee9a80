import type { Insertable } from "kysely";
import type { Executor } from "./executor.js";
import type { InviteRow, InvitesTable } from "./schema.js";
import { guardUnique } from "./unique.js";

/** A pending invite with the organization it is to, as the invited user lists them. */
export interface InviteWithOrg extends InviteRow {
  org_slug: string;
  org_name: string;
}

/** Finding pending invites. */
function inviteReads(ex: Executor) {
  const { db } = ex;
  const pending = () => db.selectFrom("invites").selectAll().where("accepted_at", "is", null);
  const addressedTo = (username: string, email: string) =>
    db
      .selectFrom("invites as i")
      .innerJoin("organizations as o", "o.id", "i.org_id")
      .where("i.accepted_at", "is", null)
      .where((eb) => eb.or([eb("i.username", "=", username), eb("i.email", "=", email.toLowerCase())]));
  return {
    /** Pending invites of an organization, oldest first. */
    listPending: (orgId: string) => pending().where("org_id", "=", orgId).orderBy("id").execute(),
    findPending: (id: number) => pending().where("id", "=", id).executeTakeFirst(),
    /** Pending invites addressed to a user, by username or (lower-cased) email, oldest first. */
    pendingFor: (username: string, email: string): Promise<InviteWithOrg[]> =>
      addressedTo(username, email)
        .selectAll("i")
        .select(["o.slug as org_slug", "o.name as org_name"])
        .orderBy("i.id")
        .execute(),
    countPendingFor: async (username: string, email: string) => {
      const r = await addressedTo(username, email)
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
}

/** Creating, claiming and deleting invites. */
function inviteWrites(ex: Executor) {
  const { db } = ex;
  return {
    insert: async (row: Insertable<InvitesTable>) => {
      const r = await guardUnique(ex, "invite token", () =>
        db.insertInto("invites").values(row).returning("id").executeTakeFirstOrThrow(),
      );
      return Number(r.id);
    },
    /**
     * Deletes an organization's pending invites for an address (an email, compared without case,
     * or a username); answers how many there were.
     */
    deletePending: async (orgId: string, address: { email?: string; username?: string }) => {
      const r = await db
        .deleteFrom("invites")
        .where("org_id", "=", orgId)
        .where("accepted_at", "is", null)
        .where((eb) =>
          eb.or([
            ...(address.email !== undefined ? [eb("email", "=", address.email.toLowerCase())] : []),
            ...(address.username !== undefined ? [eb("username", "=", address.username)] : []),
          ]),
        )
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
    /** Pending invites addressed to a username, anywhere (that user is being deleted). */
    deletePendingForUsername: (username: string) =>
      db.deleteFrom("invites").where("accepted_at", "is", null).where("username", "=", username).execute(),
    deletePendingById: async (id: number) => {
      const r = await db
        .deleteFrom("invites")
        .where("id", "=", id)
        .where("accepted_at", "is", null)
        .executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
    /**
     * Marks a pending invite accepted; false when it no longer is pending (accepted, declined or
     * deleted meanwhile). On PostgreSQL the update waits for a concurrent one on the same row and
     * then re-checks, so an invite is accepted at most once.
     */
    claim: async (id: number, at: string) => {
      const r = await db
        .updateTable("invites")
        .set({ accepted_at: at })
        .where("id", "=", id)
        .where("accepted_at", "is", null)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
  };
}

/**
 * Invites to organizations. The `token` column holds the SHA-256 hash of the invite's secret,
 * never the secret itself: the secret is shown once, to whoever created the invite.
 */
export function invitesRepo(ex: Executor) {
  return { ...inviteReads(ex), ...inviteWrites(ex) };
}

export type InvitesRepo = ReturnType<typeof invitesRepo>;
