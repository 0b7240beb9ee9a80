import type { Executor } from "./executor.js";
import type { NewAuditLog } from "./schema.js";

/** Narrows an audit log read: entries with this code, by this author (both exact). */
export interface AuditFilter {
  code?: string;
  author?: string;
}

export function auditRepo({ db }: Executor) {
  const of = (orgId: string, f: AuditFilter) => {
    let q = db.selectFrom("audit_logs").where("org_id", "=", orgId);
    if (f.code !== undefined) q = q.where("code", "=", f.code);
    if (f.author !== undefined) q = q.where("author", "=", f.author);
    return q;
  };
  return {
    insert: (row: NewAuditLog) => db.insertInto("audit_logs").values(row).execute(),

    /** Newest first. */
    list: (orgId: string, limit: number, offset: number, f: AuditFilter = {}) =>
      of(orgId, f).selectAll().orderBy("id", "desc").limit(limit).offset(offset).execute(),

    /** Newest first, older than the entry `beforeId` (a page's cursor). */
    listBefore: (orgId: string, beforeId: number | undefined, limit: number, f: AuditFilter = {}) => {
      let q = of(orgId, f).selectAll();
      if (beforeId !== undefined) q = q.where("id", "<", beforeId);
      return q.orderBy("id", "desc").limit(limit).execute();
    },

    count: async (orgId: string, f: AuditFilter = {}) => {
      const r = await of(orgId, f)
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
}

export type AuditRepo = ReturnType<typeof auditRepo>;
