import type { Clock } from "../../lib/time.js";
import { isoTime } from "../../lib/time.js";
import type { OrganizationRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import { audit } from "../core/audit-tx.js";
import type { Ctx } from "../core/context.js";
import type { FileFacts } from "../core/ports.js";
import { currentPeriod } from "./period.js";

/** Audit code of a block set or lifted by the plan's quotas (Turso has none for this). */
export const BLOCK_AUDIT_CODE = "org-quota-block";

/**
 * Author of audit entries Shoal writes on its own (a block found after a usage flush). The colon
 * can't appear in a username, so it can't be mistaken for one.
 */
const SYSTEM_AUTHOR = "shoal:usage";

/** What an organization's plan says about its usage this month. */
export interface Verdict {
  /** Rows-read quota used up: every statement is refused. */
  reads: boolean;
  /** Rows-written or storage quota used up: writes are refused, reads still work. */
  writes: boolean;
  reasons: string[];
}

/** Bytes the organization's databases take now: each primary file with its WAL, kept deleted ones too. */
export async function storageOf(
  r: Repos,
  deps: { files: Pick<FileFacts, "sizeOf"> },
  orgId: string,
): Promise<number> {
  let bytes = 0;
  for (const d of await r.databases.list(orgId)) bytes += deps.files.sizeOf(d.primary_location, d.id);
  // Deleted databases kept restorable still take their room.
  return bytes + (await r.deletedDatabases.keptBytes(orgId));
}

/** What judging reaches: the files' sizes and the month it is. */
export interface JudgePorts {
  files: Pick<FileFacts, "sizeOf">;
  clock: Clock;
}

/** The facts about an organization that judging needs. */
type Judged = Pick<OrganizationRow, "id" | "plan" | "overages">;

/**
 * Judges an organization against its plan. A quota is used up when this month's usage has reached
 * it (so a quota of 0 allows nothing). With overages on nothing is ever blocked.
 */
export async function judge(r: Repos, deps: JudgePorts, org: Judged): Promise<Verdict> {
  const v: Verdict = { reads: false, writes: false, reasons: [] };
  if (org.overages === 1) return v;
  const plan = await r.plans.find(org.plan);
  if (!plan) return v;
  const usedUp = (what: string, used: number, quota: number | null) => {
    if (quota === null || used < Number(quota)) return false;
    v.reasons.push(`${what}: ${used} of ${quota}`);
    return true;
  };
  if (plan.rows_read !== null || plan.rows_written !== null) {
    const p = currentPeriod(deps.clock());
    const t = await r.usage.orgTotals(org.id, p.fromDay, p.toDay);
    if (usedUp("rows read", t.rows_read, plan.rows_read)) v.reads = true;
    if (usedUp("rows written", t.rows_written, plan.rows_written)) v.writes = true;
  }
  if (
    plan.storage_bytes !== null &&
    usedUp("storage bytes", await storageOf(r, deps, org.id), plan.storage_bytes)
  ) {
    v.writes = true;
  }
  return v;
}

function describe(v: Verdict, org: OrganizationRow): string {
  const why =
    v.reasons.length > 0 ? `: the ${org.plan} plan's quota is used up (${v.reasons.join(", ")})` : "";
  if (v.reads) return `reads and writes blocked${why}`;
  if (v.writes) return `writes blocked${why}`;
  return org.overages === 1 ? "block lifted: overages are on" : "block lifted: usage is within the plan";
}

/**
 * Judges one organization inside the caller's transaction and stores the result on it. Returns
 * true when the flags changed: the caller must then clear the data plane's cache, once committed.
 * The organization is locked first, so a concurrent overages change and a usage flush can't
 * store verdicts made on each other's stale view.
 */
export async function settleBlocking(r: Repos, deps: JudgePorts, orgId: string, ctx?: Ctx): Promise<boolean> {
  await r.plans.lockOrganization(orgId);
  const org = await r.organizations.findById(orgId);
  if (!org) return false;
  const v = await judge(r, deps, org);
  if (v.reads === (org.blocked_reads === 1) && v.writes === (org.blocked_writes === 1)) return false;
  await r.organizations.update(org.id, { blocked_reads: v.reads ? 1 : 0, blocked_writes: v.writes ? 1 : 0 });
  const message = describe(v, org);
  const data = {
    blocked_reads: v.reads,
    blocked_writes: v.writes,
    plan: org.plan,
    period: currentPeriod(deps.clock()).month,
    reasons: v.reasons,
  };
  if (ctx) await audit(r, ctx, org.id, BLOCK_AUDIT_CODE, message, data);
  else {
    await r.audit.insert({
      org_id: org.id,
      code: BLOCK_AUDIT_CODE,
      message,
      origin: "system",
      author: SYSTEM_AUTHOR,
      data: JSON.stringify(data),
      created_at: isoTime(deps.clock()),
    });
  }
  return true;
}
