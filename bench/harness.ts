import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..");

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers during the warm-up and the measured time together. */
  answered: number;
  /** Every measured latency, when the job asked for them. */
  latencies?: number[];
}

export interface LoadJob {
  url: string;
  headers?: Record<string, string>;
  bodies: string[];
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** Paths that replace the URL's, taken in turn with the bodies (many databases, one process). */
  paths?: string[];
  /** Every path over one pool of connections (as one pooled client or a proxy), not a pool each. */
  sharedPool?: boolean;
  /** Return every measured latency too. */
  latencies?: boolean;
  /** Cores the load process may run on (`taskset -c` list), apart from the server's. */
  cpus?: string;
}

/** `cmd args` as a command confined to `cpus` (a `taskset -c` list), or as it is without one. */
export function pinned(cpus: string | undefined, cmd: string, args: string[]): [string, string[]] {
  return cpus ? ["taskset", ["-c", cpus, cmd, ...args]] : [cmd, args];
}

/** Drives `job` from a separate process and returns what it measured. */
export async function load(job: LoadJob): Promise<LoadResult & { perSecond: number }> {
  const [cmd, args] = pinned(job.cpus, process.execPath, [
    "--import",
    "tsx",
    path.join(ROOT, "bench/load.ts"),
    JSON.stringify({ headers: {}, ...job }),
  ]);
  const { stdout } = await run(cmd, args, {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const r = JSON.parse(stdout) as LoadResult;
  return { ...r, perSecond: r.requests / r.seconds };
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Prints rows as an aligned text table. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

export interface BenchOptions {
  quick: boolean;
}
