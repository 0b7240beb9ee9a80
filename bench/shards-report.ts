/** The tables and ratios the many-database benchmark (`shards.ts`) prints. */
import { loadavg } from "node:os";
import { fmt, table } from "./harness.js";
import type { SpreadResult } from "./load-spread.js";

export interface ShardRow {
  kind: "shoal" | "bare";
  /** `SHOAL_WORKERS` for Shoal, processes for the bare baseline. */
  size: number;
  label: string;
  /** How the load pooled its connections: one pool per database, or one for all (Shoal only). */
  pool?: "per-database" | "shared";
  read: SpreadResult;
  insert: SpreadResult;
}

interface Setup {
  /** Cores the servers run on. */
  cores: number;
  machineCores: number;
  /** The load processes run on cores of their own. */
  pinned: boolean;
  loaders: number;
  clusterSizes: number[];
  timing: { warmupMs: number; durationMs: number };
  rounds: number;
  concurrency: number;
  /** The machine's 1-minute load average when the benchmark started. */
  loadBefore: number;
}

const cpu = (r: SpreadResult) => (r.cpuUsPerRequest === undefined ? "-" : fmt(r.cpuUsPerRequest));
const cells = (r: SpreadResult) => [fmt(r.perSecond), fmt(r.p50Ms, 2), fmt(r.p99Ms, 2), cpu(r)];

/** Prints the run's figures; returns the ratios. */
export function printShards(
  rows: ShardRow[],
  single: Record<string, SpreadResult>,
  setup: Setup,
): Record<string, number> {
  const { cores, machineCores, pinned, loaders, clusterSizes, timing, rounds, concurrency, loadBefore } =
    setup;
  console.log("\nMany databases: 64 databases, point reads and single-row inserts over Hrana HTTP");
  console.log(
    `${concurrency} requests in flight from ${loaders} load processes, ${timing.durationMs / 1000}s per run, best of ${rounds} (CPU: lowest), ${machineCores} cores`,
  );
  console.log(
    pinned
      ? `The servers run on ${cores} cores, the load processes on the other ${machineCores - cores}.`
      : `The servers and the load processes share the ${machineCores} cores.`,
  );
  // What else the machine ran: on a shared machine the rates move with it, CPU per request less.
  const after = loadavg()[0]!;
  console.log(`Load average (1 min) ${fmt(loadBefore, 1)} at the start, ${fmt(after, 1)} at the end.`);
  if (!pinned && cores < 16) {
    const skipped = [2, 4, 8].filter((n) => n > cores);
    console.log(
      `Only ${cores} cores: the load processes share them with the server, so scaling past ${cores} can't show` +
        (skipped.length
          ? `; Shoal at ${skipped.join(", ")} shards and bare clusters of as many processes skipped.`
          : "."),
    );
  }
  console.log(
    `\n${table(
      [
        "server",
        "reads/s",
        "p50 ms",
        "p99 ms",
        "CPU µs/read",
        "inserts/s",
        "p50 ms",
        "p99 ms",
        "CPU µs/insert",
      ],
      rows.map((r) => [r.label, ...cells(r.read), ...cells(r.insert)]),
    )}`,
  );
  const bare = rows.find((r) => r.kind === "bare" && r.size === 1)!;
  const shoal = rows.filter((r) => r.kind === "shoal" && r.pool !== "shared");
  const shared = rows.filter((r) => r.kind === "shoal" && r.pool === "shared");
  const one = shoal.find((r) => r.size === 1)!;
  const all = shoal.find((r) => r.size === cores)!;
  const allShared = shared.find((r) => r.size === cores);
  const clusters = rows.filter((r) => r.kind === "bare" && r.size > 1);
  // The bare handler's best, whatever its number of processes: on a small or busy machine a
  // cluster may do worse than one process.
  const bestBare = (k: "read" | "insert") =>
    Math.max(bare[k].perSecond, ...clusters.map((r) => r[k].perSecond));
  const bestLabel = (k: "read" | "insert") =>
    [bare, ...clusters].find((r) => r[k].perSecond === bestBare(k))!.size;
  // CPU per request against the bare handler's in one process: what a request costs, apart from
  // how many cores there are to spend.
  const cpuRatio = (r: ShardRow, k: "read" | "insert") =>
    r[k].cpuUsPerRequest !== undefined && bare[k].cpuUsPerRequest
      ? fmt(r[k].cpuUsPerRequest! / bare[k].cpuUsPerRequest!, 2)
      : "-";
  console.log(
    `\n${table(
      [
        "Shoal",
        "reads / bare",
        "inserts / bare",
        "reads / best bare",
        "inserts / best bare",
        "CPU/read / bare's",
        "CPU/insert / bare's",
      ],
      [...shoal, ...shared].map((r) => [
        r.label.replace("Shoal, ", ""),
        fmt(r.read.perSecond / bare.read.perSecond, 2),
        fmt(r.insert.perSecond / bare.insert.perSecond, 2),
        fmt(r.read.perSecond / bestBare("read"), 2),
        fmt(r.insert.perSecond / bestBare("insert"), 2),
        cpuRatio(r, "read"),
        cpuRatio(r, "insert"),
      ]),
    )}`,
  );
  const cpuOf = (r: ShardRow | undefined, k: "read" | "insert") =>
    r?.[k].cpuUsPerRequest !== undefined && bare[k].cpuUsPerRequest
      ? r[k].cpuUsPerRequest! / bare[k].cpuUsPerRequest!
      : Number.NaN;
  const ratios = {
    allOverOneReads: all.read.perSecond / one.read.perSecond,
    allOverOneInserts: all.insert.perSecond / one.insert.perSecond,
    allOverBestBareReads: all.read.perSecond / bestBare("read"),
    allOverBestBareInserts: all.insert.perSecond / bestBare("insert"),
    sharedOverBestBareReads: (allShared?.read.perSecond ?? Number.NaN) / bestBare("read"),
    sharedOverBestBareInserts: (allShared?.insert.perSecond ?? Number.NaN) / bestBare("insert"),
    sharedOverPerDatabaseReads: (allShared?.read.perSecond ?? Number.NaN) / all.read.perSecond,
    sharedOverPerDatabaseInserts: (allShared?.insert.perSecond ?? Number.NaN) / all.insert.perSecond,
    cpuPerReadOverBare: cpuOf(all, "read"),
    cpuPerInsertOverBare: cpuOf(all, "insert"),
    sharedCpuPerReadOverBare: cpuOf(allShared, "read"),
    sharedCpuPerInsertOverBare: cpuOf(allShared, "insert"),
    bareClusterOverBareReads: (clusters.at(-1) ?? bare).read.perSecond / bare.read.perSecond,
    bareClusterOverBareInserts: (clusters.at(-1) ?? bare).insert.perSecond / bare.insert.perSecond,
    singleReadP50Ratio: single.shoalRead!.p50Ms / single.bareRead!.p50Ms,
    singleInsertRatio: single.shoalInsert!.perSecond / single.bareInsert!.perSecond,
  };
  const largest = clusters.at(-1)?.size ?? 1;
  const procs = (k: "read" | "insert") => `${bestLabel(k)} process${bestLabel(k) === 1 ? "" : "es"}`;
  console.log(
    `\nShoal all / Shoal 1 (pool per database): reads ${fmt(ratios.allOverOneReads, 2)}, inserts ${fmt(ratios.allOverOneInserts, 2)}`,
  );
  console.log(
    `Shoal all / best bare, pool per database: reads ${fmt(ratios.allOverBestBareReads, 2)} (bare at ${procs("read")}), inserts ${fmt(ratios.allOverBestBareInserts, 2)} (bare at ${procs("insert")}) (goal ≥ 0.8 on 16 cores)`,
  );
  console.log(
    `Shoal all / best bare, one shared pool: reads ${fmt(ratios.sharedOverBestBareReads, 2)}, inserts ${fmt(ratios.sharedOverBestBareInserts, 2)} (goal ≥ 0.7 on 16 cores); shared / per database: reads ${fmt(ratios.sharedOverPerDatabaseReads, 2)}, inserts ${fmt(ratios.sharedOverPerDatabaseInserts, 2)}`,
  );
  console.log(
    `Shoal all, CPU per request / bare one process's: pool per database reads ${fmt(ratios.cpuPerReadOverBare, 2)}, inserts ${fmt(ratios.cpuPerInsertOverBare, 2)}; shared pool reads ${fmt(ratios.sharedCpuPerReadOverBare, 2)}, inserts ${fmt(ratios.sharedCpuPerInsertOverBare, 2)} (goal ≤ 1.5)`,
  );
  console.log(
    `bare cluster (${largest}) / bare one process: reads ${fmt(ratios.bareClusterOverBareReads, 2)}, inserts ${fmt(ratios.bareClusterOverBareInserts, 2)}` +
      (clusterSizes.length === 0 ? " (no cluster: one core)" : ""),
  );
  console.log(
    `One client, point reads on one database, p50: Shoal ${fmt(single.shoalRead!.p50Ms, 3)} ms, bare ${fmt(single.bareRead!.p50Ms, 3)} ms, ratio ${fmt(ratios.singleReadP50Ratio, 2)} (goal ≤ 1.1)`,
  );
  console.log(
    `One database, 32 in flight, inserts: Shoal ${fmt(single.shoalInsert!.perSecond)}/s, bare ${fmt(single.bareInsert!.perSecond)}/s, ratio ${fmt(ratios.singleInsertRatio, 2)} (goal ≥ 0.8)`,
  );
  console.log(
    "SHOAL_WORKERS is the number of shard processes; each database is served by one of them, so one database's figures don't move with it.",
  );
  return ratios;
}
