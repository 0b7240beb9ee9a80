/**
 * Many databases (issue 12): point reads and single-row inserts spread over 64 databases, 256
 * requests in flight from load processes, against Shoal processes at `SHOAL_WORKERS` = 1, 2, 4,
 * 8 and the number of cores, and, in the same run, the bare node:http + libsql baseline over the
 * same 64 databases as one process and as a cluster of processes. Also one client's point-read
 * latency and single-database insert throughput against the bare process. Besides requests per
 * second it reports the servers' CPU per request, which a shared machine disturbs far less.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import path from "node:path";
import type { BenchOptions, LoadJob } from "./harness.js";
import { loadSpread, type SpreadResult } from "./load-spread.js";
import { printShards, type ShardRow } from "./shards-report.js";
import { dbName, type Server, seedFiles, seedShoal, startBare, startShoalProcess } from "./shards-servers.js";

const DATABASES = 64;
const CONCURRENCY = 256;
const READ = "SELECT v FROM kv WHERE id = ?";
const INSERT = "INSERT INTO log (v) VALUES (?)";

const hrana = (sql: string, arg: number) =>
  JSON.stringify({
    requests: [
      { type: "execute", stmt: { sql, args: [{ type: "integer", value: String(arg) }] } },
      { type: "close" },
    ],
  });
const ids = Array.from({ length: 500 }, (_, i) => 1 + ((i * 7919) % 10_000));
const reads = ids.map((i) => hrana(READ, i));
const inserts = ids.map((i) => hrana(INSERT, i));
const allPaths = Array.from({ length: DATABASES }, (_, i) => `/db/admin/${dbName(i)}/v2/pipeline`);

export async function shardsBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  const cores = availableParallelism();
  const loadBefore = loadavg()[0]!;
  const loaders = Math.min(6, Math.max(2, Math.floor(cores / 3)));
  const timing = opts.quick ? { warmupMs: 300, durationMs: 1500 } : { warmupMs: 500, durationMs: 3000 };
  // A fresh process first opens 64 databases, prepares and classifies its statements and compiles
  // its hot paths: a warm-up of its own, unmeasured, so that none of it counts as a request's CPU.
  const prime = { warmupMs: 0, durationMs: opts.quick ? 700 : 1500 };
  const workerCounts = [...new Set([1, 2, 4, 8, cores])].sort((a, b) => a - b);
  const clusterSizes = [2, 4, 8].filter((n) => n <= cores);
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-shards-"));
  const shoalDir = await mkdtemp(path.join(dir, "shoal-"));
  const bareDir = path.join(dir, "bare");
  process.stderr.write(
    `  shards: ${cores} cores, ${loaders} load processes, seeding ${DATABASES} databases\n`,
  );

  let jwt = "";
  const many = async (server: Server, bodies: string[], t = timing): Promise<SpreadResult> => {
    const job: LoadJob = {
      url: server.url,
      headers: { authorization: `Bearer ${jwt}` },
      bodies,
      paths: allPaths,
      concurrency: CONCURRENCY,
      ...t,
    };
    const r = await loadSpread(job, loaders, server.pids);
    if (r.errors > 0) throw new Error(`${server.url}: ${r.errors} errors`);
    return r;
  };
  const one = async (server: Server, bodies: string[], concurrency: number): Promise<SpreadResult> => {
    const job = { url: `${server.url}${allPaths[0]}`, headers: { authorization: `Bearer ${jwt}` }, bodies };
    const r = await loadSpread({ ...job, concurrency, ...timing }, 1, server.pids);
    if (r.errors > 0) throw new Error(`${server.url}: ${r.errors} errors`);
    return r;
  };

  const rows: ShardRow[] = [];
  const single: Record<string, SpreadResult> = {};
  /** Measures `server` under the many-database load (and, with `prefix`, one database's), then stops it. */
  const measure = async (
    kind: ShardRow["kind"],
    size: number,
    label: string,
    server: Server,
    prefix?: string,
  ) => {
    process.stderr.write(`  shards: ${label}\n`);
    try {
      await many(server, reads, prime);
      await many(server, inserts, prime);
      rows.push({ kind, size, label, read: await many(server, reads), insert: await many(server, inserts) });
      if (prefix) {
        single[`${prefix}Read`] = await one(server, reads, 1);
        single[`${prefix}Insert`] = await one(server, inserts, 32);
      }
    } finally {
      await server.stop();
    }
  };
  try {
    const first = await startShoalProcess(shoalDir, workerCounts[0]!);
    try {
      jwt = await seedShoal(first, DATABASES);
      await seedFiles(bareDir, DATABASES);
    } catch (e) {
      await first.stop();
      throw e;
    }
    for (const [i, workers] of workerCounts.entries()) {
      const server = i === 0 ? first : await startShoalProcess(shoalDir, workers);
      const label = `Shoal, SHOAL_WORKERS=${workers}${workers === cores ? " (all)" : ""}`;
      await measure("shoal", workers, label, server, workers === cores ? "shoal" : undefined);
    }
    for (const processes of [1, ...clusterSizes]) {
      const label = processes === 1 ? "bare, one process" : `bare cluster, ${processes} processes`;
      await measure(
        "bare",
        processes,
        label,
        await startBare(bareDir, processes),
        processes === 1 ? "bare" : undefined,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const ratios = printShards(rows, single, {
    cores,
    loaders,
    clusterSizes,
    timing,
    concurrency: CONCURRENCY,
    loadBefore,
  });
  process.stderr.write(`  shards: done\n`);
  return { shards: { cores, loaders, timing, rows, single, ratios } };
}
