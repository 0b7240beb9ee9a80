/**
 * Load from several load processes at once, and the CPU the server spent serving it: on a machine
 * shared with other work, CPU per request moves far less than requests per second do.
 */
import { readFileSync } from "node:fs";
import { type LoadJob, load } from "./harness.js";

/** Linux's clock ticks per second for /proc/<pid>/stat (USER_HZ, 100 on every common kernel). */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds a process has used, all its threads (user + system), from /proc. Undefined where
 * /proc isn't there.
 */
export function cpuSeconds(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

const cpuOf = (pids: number[]) => {
  let sum = 0;
  for (const pid of pids) {
    const s = cpuSeconds(pid);
    if (s === undefined) return undefined;
    sum += s;
  }
  return sum;
};

export interface SpreadResult {
  perSecond: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU per answered request, all of `pids` together; undefined without /proc. */
  cpuUsPerRequest: number | undefined;
}

/**
 * Runs `job` from `processes` load processes at once, its concurrency split between them, and
 * merges what they measured. `pids` are the server's processes, whose CPU is read before and after.
 */
export async function loadSpread(job: LoadJob, processes: number, pids: number[]): Promise<SpreadResult> {
  const n = Math.max(1, Math.min(processes, job.concurrency));
  const shares = Array.from(
    { length: n },
    (_, i) => Math.floor(job.concurrency / n) + (i < job.concurrency % n ? 1 : 0),
  );
  const before = cpuOf(pids);
  const results = await Promise.all(
    shares.map((concurrency) => load({ ...job, concurrency, latencies: n > 1 })),
  );
  const after = cpuOf(pids);
  const answered = results.reduce((s, r) => s + r.answered, 0);
  const cpuUsPerRequest =
    before === undefined || after === undefined || answered === 0
      ? undefined
      : ((after - before) * 1e6) / answered;
  const errors = results.reduce((s, r) => s + r.errors, 0);
  const perSecond = results.reduce((s, r) => s + r.perSecond, 0);
  if (n === 1) {
    const r = results[0]!;
    return { perSecond, errors, p50Ms: r.p50Ms, p99Ms: r.p99Ms, cpuUsPerRequest };
  }
  const all = results.flatMap((r) => r.latencies ?? []).sort((a, b) => a - b);
  const pct = (p: number) => all[Math.min(all.length - 1, Math.floor(all.length * p))] ?? 0;
  return { perSecond, errors, p50Ms: pct(0.5), p99Ms: pct(0.99), cpuUsPerRequest };
}
