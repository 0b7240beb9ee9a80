import { judge, settleBlocking } from "./blocking-tx.js";
import { currentPeriod } from "./period.js";
import type { PlanPorts } from "./ports.js";

/** What the judge reaches; the clock is read at each flush (tests move it to a new month). */
export type QuotaJudgePorts = Pick<PlanPorts, "store" | "clock" | "log" | "files" | "directory">;

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
    private readonly deps: QuotaJudgePorts,
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
