import type { Config } from "../config.js";
import { sweepDeleted } from "../domain/databases/sweep-deleted.js";
import { QuotaJudge } from "../domain/plans/quota-judge.js";
import type { Parts } from "./wiring.js";

/** The timers of a serving process; `stop` ends them, with a last flush of the usage counts. */
export interface Jobs {
  stop(): Promise<void>;
}

/**
 * Usage flushes with the quota checks after them, and the sweeping of expired dumps and of deleted
 * databases past their window (each shard prunes its own history).
 */
export function startJobs(config: Config, parts: Parts): Jobs {
  // Plan quotas are judged after every flush of the usage counts; blocked organizations without
  // new usage are looked at again every ten flushes.
  const quotas = new QuotaJudge(parts, 10 * config.usageFlushIntervalMs);
  parts.meter.afterFlush((orgIds) => quotas.afterFlush(orgIds));
  parts.meter.start(config.usageFlushIntervalMs);
  const pruning = setInterval(() => {
    parts.dumps.sweep();
    // Deleted databases whose time to be restored is over.
    sweepDeleted(parts).catch((e: unknown) =>
      parts.log.error({ err: e }, "the sweep of deleted databases failed"),
    );
  }, 10 * 60_000);
  pruning.unref();
  return {
    async stop() {
      clearInterval(pruning);
      await parts.meter.stop();
    },
  };
}
