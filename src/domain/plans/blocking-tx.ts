import { isoTime } from "../../lib/time.js";
import type { OrganizationRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import { audit } from "../core/audit-tx.js";
import type { Ctx, Deps } from "../core/context.js";

/** Audit code of a block set or lifted by the plan's quotas (Turso has none for this). */
export const BLOCK_AUDIT_CODE = "org-quota-block";

/**
 * Author of audit entries Shoal writes on its own (a block found after a usage flush). The colon
 * can't appear in a username, so it can't be mistaken for one.
 */
const SYSTEM_AUTHOR = "shoal:usage";

/** A calendar month (UTC) up to a day in it: usage is counted per UTC day. */
export interface Period {
  /** `YYYY-MM`. */
  month: string;
  /** The month's first day, `YYYY-MM-01`. */
  fromDay: string;
  /** The day `now` falls on. */
  toDay: string;
}

export function currentPeriod(now: Date): Period {
  const day = now.toISOString().slice(0, 10);
  const month = day.slice(0, 7);
  return { month, fromDay: `${month}-01`, toDay: day };
}

/** What an organization's plan says about its usage this month. */
export interface Verdict {
  /** Rows-read quota used up: every statement is refused. */
  reads: boolean;
  /** Rows-written or storage quota used up: writes are refused, reads still work. */
  writes: boolean;
  reasons: string[];
}

/** Bytes the organization's databases take now: each primary file with its WAL. */
export async function storageOf(r: Repos, deps: Pick<Deps, "files">, orgId: string): Promise<number> {
  let bytes = 0;
  for (const d of await r.databases.list(orgId)) bytes += deps.files.sizeOf(d.primary_location, d.id);
  return bytes;
}

/** The facts about an organization that judging needs. */
type Judged = Pick<OrganizationRow, "id" | "plan" | "overages">;

/**
 * Judges an organization against its plan. A quota is used up when this month's usage has reached
 * it (so a quota of 0 allows nothing). With overages on nothing is ever blocked.
 */
export async function judge(r: Repos, deps: Pick<Deps, "files" | "clock">, org: Judged): Promise<Verdict> {
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
export async function settleBlocking(
  r: Repos,
  deps: Pick<Deps, "files" | "clock">,
  orgId: string,
  ctx?: Ctx,
): Promise<boolean> {
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

/**
 * Judges plan quotas after each usage flush: the organizations whose counts the flush stored, at
 * once; and every blocked organization (a block ends when a new month starts, or when deleting a
 * database brings storage under the quota, without any new usage) at once when the month changes
 * and otherwise every `sweepMs`. Organizations whose plan meters nothing, or with overages on, are
 * skipped unless blocked.
 */
export class QuotaJudge {
  private lastSweep = Number.NEGATIVE_INFINITY;
  private lastMonth = "";

  constructor(
    private readonly deps: Deps,
    private readonly sweepMs: number,
  ) {}

  async afterFlush(touched: ReadonlySet<string>): Promise<void> {
    const { deps } = this;
    const now = deps.clock();
    const month = currentPeriod(now).month;
    const sweep = month !== this.lastMonth || now.getTime() - this.lastSweep >= this.sweepMs;
    if (sweep) {
      this.lastSweep = now.getTime();
      this.lastMonth = month;
    }
    if (touched.size === 0 && !sweep) return;
    const candidates = await deps.store.read((r) => r.plans.meteredOrganizations([...touched], sweep));
    let changed = false;
    try {
      for (const o of candidates) {
        const blocked = o.blocked_reads === 1 || o.blocked_writes === 1;
        const metered =
          o.overages === 0 && (o.rows_read !== null || o.rows_written !== null || o.storage_bytes !== null);
        if (!blocked && !metered) continue;
        try {
          // Judged without a lock first: most flushes change nothing, and a write transaction per
          // organization each time would compete with the API's writes.
          const v = await deps.store.read((r) => judge(r, deps, o));
          if (v.reads === (o.blocked_reads === 1) && v.writes === (o.blocked_writes === 1)) continue;
          if (await deps.store.write((r) => settleBlocking(r, deps, o.id))) changed = true;
        } catch (e) {
          deps.log.error({ err: e, orgId: o.id }, "could not judge an organization's quotas; will retry");
        }
      }
    } finally {
      if (changed) deps.directory.invalidate();
    }
  }
}
