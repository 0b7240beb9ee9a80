import type { Executor } from "./executor.js";
import type { NewAuditLog } from "./schema.js";

export function auditRepo({ db }: Executor) {
  return {
    insert: (row: NewAuditLog) => db.insertInto("audit_logs").values(row).execute(),

    /** Newest first. */
    list: (orgId: string, limit: number, offset: number) =>
      db
        .selectFrom("audit_logs")
        .selectAll()
        .where("org_id", "=", orgId)
        .orderBy("id", "desc")
        .limit(limit)
        .offset(offset)
        .execute(),

    /** Newest first, older than the entry `beforeId` (a page's cursor). */
    listBefore: (orgId: string, beforeId: number | undefined, limit: number) => {
      let q = db.selectFrom("audit_logs").selectAll().where("org_id", "=", orgId);
      if (beforeId !== undefined) q = q.where("id", "<", beforeId);
      return q.orderBy("id", "desc").limit(limit).execute();
    },

    count: async (orgId: string) => {
      const r = await db
        .selectFrom("audit_logs")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("org_id", "=", orgId)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
}

export type AuditRepo = ReturnType<typeof auditRepo>;
