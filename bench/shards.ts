/**
 * Many databases (issue 12): point reads and single-row inserts spread over 64 databases, 256
 * requests in flight from load processes, against Shoal processes at `SHOAL_WORKERS` = 1, 2, 4,
 * 8 and the number of cores (those up to the cores the servers have), and, in the same run, the bare node:http + libsql baseline over the
 * same 64 databases as one process and as a cluster of processes. Shoal is measured twice: with a
 * keep-alive pool per database (clients addressing their database by hostname), and with one pool
 * shared by all 64 (one pooled client over the path URLs, fetch's pool per origin, or a proxy in
 * front), where most requests arrive at a shard that doesn't own their database. Also one client's point-read
 * latency and single-database insert throughput against the bare process. Besides requests per
 * second it reports the servers' CPU per request, which a shared machine disturbs far less.
 *
 * Every server runs at once, each on its own copy of the files (idle while another is measured),
 * and the rounds go through them in turn, so that drift on a shared machine hits them all alike;
 * each keeps its best round.
 */
import { spawnSync } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import path from "node:path";
import type { BenchOptions, LoadJob } from "./harness.js";
import { loadSpread, type SpreadResult } from "./load-spread.js";
import { printShards, type ShardRow } from "./shards-report.js";
import {
  dbName,
  ensureBuilt,
  type Server,
  seedFiles,
  seedShoal,
  startBare,
  startShoalProcess,
} from "./shards-servers.js";

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

/** The better of two rounds: the higher rate with its latencies, and the lower CPU per request. */
function best(a: SpreadResult | undefined, b: SpreadResult): SpreadResult {
  if (!a) return b;
  const top = b.perSecond > a.perSecond ? b : a;
  const cpus = [a.cpuUsPerRequest, b.cpuUsPerRequest].filter((c) => c !== undefined);
  return { ...top, cpuUsPerRequest: cpus.length ? Math.min(...cpus) : undefined };
}

/**
 * Which cores the servers and the load processes run on: apart, so the load doesn't take the
 * servers' cores (`taskset`, on a machine with enough of them), the servers on the first ones.
 * On a small machine they share all the cores, and the report says so.
 */
function coreSplit(cores: number, loaders: number): { server?: string; load?: string; serverCores: number } {
  if (cores < 6 || spawnSync("taskset", ["-V"]).status !== 0) return { serverCores: cores };
  const serverCores = cores - loaders;
  return { server: `0-${serverCores - 1}`, load: `${serverCores}-${cores - 1}`, serverCores };
}

interface Entry {
  row: Omit<ShardRow, "read" | "insert"> & Partial<ShardRow>;
  server: Server;
  /** All 64 databases over one pool of connections (one pooled client, a proxy): Shoal's second row. */
  shared?: boolean;
  /** Also measured on one database (one client's reads, 32 inserts in flight) under this name. */
  single?: "shoal" | "bare";
}

/** Seeds once, then starts every server on a copy of what was seeded. */
async function startAll(
  dir: string,
  workerCounts: number[],
  bareSizes: number[],
  cores: number,
  cpus: string | undefined,
) {
  await ensureBuilt();
  const seedDir = await mkdtemp(path.join(dir, "seed-"));
  const seeder = await startShoalProcess(seedDir, 1);
  let jwt: string;
  try {
    jwt = await seedShoal(seeder, DATABASES);
  } finally {
    await seeder.stop();
  }
  await seedFiles(path.join(dir, "bare-seed"), DATABASES);
  const entries: Entry[] = [];
  const copy = async (from: string, name: string) => {
    const to = path.join(dir, name);
    await cp(from, to, { recursive: true });
    return to;
  };
  try {
    for (const workers of workerCounts) {
      const server = await startShoalProcess(await copy(seedDir, `shoal-${workers}`), workers, cpus);
      const label = `Shoal, SHOAL_WORKERS=${workers}${workers === cores ? " (all)" : ""}`;
      entries.push({
        row: { kind: "shoal", size: workers, label, pool: "per-database" },
        server,
        single: workers === cores ? "shoal" : undefined,
      });
      entries.push({
        row: { kind: "shoal", size: workers, label: `${label}, shared pool`, pool: "shared" },
        server,
        shared: true,
      });
    }
    for (const processes of bareSizes) {
      const server = await startBare(
        await copy(path.join(dir, "bare-seed"), `bare-${processes}`),
        processes,
        cpus,
      );
      const label = processes === 1 ? "bare, one process" : `bare cluster, ${processes} processes`;
      entries.push({
        row: { kind: "bare", size: processes, label },
        server,
        single: processes === 1 ? "bare" : undefined,
      });
    }
  } catch (e) {
    await Promise.all([...new Set(entries.map((x) => x.server))].map((server) => server.stop()));
    throw e;
  }
  return { jwt, entries };
}

export async function shardsBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  const machineCores = availableParallelism();
  const loadBefore = loadavg()[0]!;
  const loaders = Math.min(6, Math.max(2, Math.floor(machineCores / 3)));
  const split = coreSplit(machineCores, loaders);
  // "All" is every core the servers have.
  const cores = split.serverCores;
  const timing = opts.quick ? { warmupMs: 300, durationMs: 1500 } : { warmupMs: 500, durationMs: 2000 };
  const rounds = opts.quick ? 1 : 2;
  // A fresh process first opens 64 databases, prepares and classifies its statements and compiles
  // its hot paths: a warm-up of its own, unmeasured, so that none of it counts as a request's CPU.
  // With several rounds the first one is that warm-up (each server keeps its best round).
  const prime = { warmupMs: 0, durationMs: 700 };
  // Past the cores the servers have, more shards only contend (as the bare clusters, skipped too).
  const workerCounts = [...new Set([1, 2, 4, 8, cores])].filter((n) => n <= cores).sort((a, b) => a - b);
  const clusterSizes = [...new Set([2, 4, 8, cores])].filter((n) => n > 1 && n <= cores);
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-shards-"));
  process.stderr.write(
    `  shards: ${machineCores} cores (${split.server ? `servers on ${split.server}, load on ${split.load}` : "shared by servers and load"}), ${loaders} load processes, seeding ${DATABASES} databases\n`,
  );

  const single: Record<string, SpreadResult> = {};
  let entries: Entry[] = [];
  try {
    const started = await startAll(dir, workerCounts, [1, ...clusterSizes], cores, split.server);
    entries = started.entries;
    const headers = { authorization: `Bearer ${started.jwt}` };
    const run = async (server: Server, job: Omit<LoadJob, "url" | "headers">, url = server.url) => {
      const r = await loadSpread(
        { ...job, url, headers, cpus: split.load },
        job.paths ? loaders : 1,
        server.pids,
      );
      if (r.errors > 0) throw new Error(`${server.url}: ${r.errors} errors`);
      return r;
    };
    const many = (server: Server, bodies: string[], t = timing, sharedPool = false) =>
      run(server, { bodies, paths: allPaths, concurrency: CONCURRENCY, sharedPool, ...t });
    for (const { server, shared } of rounds === 1 ? entries : []) {
      await many(server, reads, prime, shared);
      await many(server, inserts, prime, shared);
    }
    for (let round = 1; round <= rounds; round++) {
      for (const { row, server, single: name, shared } of entries) {
        process.stderr.write(`  shards: round ${round}/${rounds}, ${row.label}\n`);
        row.read = best(row.read, await many(server, reads, timing, shared));
        row.insert = best(row.insert, await many(server, inserts, timing, shared));
        if (!name) continue;
        const one = `${server.url}${allPaths[0]}`;
        single[`${name}Read`] = best(
          single[`${name}Read`],
          await run(server, { bodies: reads, concurrency: 1, ...timing }, one),
        );
        single[`${name}Insert`] = best(
          single[`${name}Insert`],
          await run(server, { bodies: inserts, concurrency: 32, ...timing }, one),
        );
      }
    }
  } finally {
    await Promise.all([...new Set(entries.map((x) => x.server))].map((server) => server.stop()));
    await rm(dir, { recursive: true, force: true });
  }
  const rows = entries.map((x) => x.row as ShardRow);
  const setup = {
    cores,
    machineCores,
    pinned: split.server !== undefined,
    loaders,
    clusterSizes,
    timing,
    rounds,
    concurrency: CONCURRENCY,
    loadBefore,
  };
  const ratios = printShards(rows, single, setup);
  return { shards: { cores, loaders, timing, rounds, rows, single, ratios } };
}
