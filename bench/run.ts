/**
 * `npm run bench`: every benchmark, each against a baseline measured in the same run.
 * Flags: --quick (short runs), --json <file> (also write the figures as JSON), --only <name>,
 * --load-only (load every benchmark's module, run none).
 *
 * Without --only, each benchmark runs in a process of its own: one benchmark's leftovers (heap,
 * native memory, open files) must not show up in the next one's figures, memory above all.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const jsonAt = args.indexOf("--json");
const jsonFile = jsonAt >= 0 ? args[jsonAt + 1] : undefined;
const onlyAt = args.indexOf("--only");
const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined;

type Benchmark = (o: { quick: boolean }) => Promise<Record<string, unknown>>;

/**
 * Each benchmark's module is loaded only when it runs: a machine that lacks a package one of them
 * needs (the S3 server, say) still runs the others.
 */
const benchmarks: Record<string, () => Promise<Benchmark>> = {
  dataplane: async () => (await import("./dataplane.js")).dataPlaneBenchmark,
  "commit-log": async () => (await import("./commit-log.js")).commitLogBenchmark,
  batch: async () => (await import("./batch.js")).batchBenchmark,
  replication: async () => (await import("./replication.js")).replicationBenchmark,
  scale: async () => (await import("./scale.js")).scaleBenchmark,
  shards: async () => (await import("./shards.js")).shardsBenchmark,
  sync: async () => (await import("./sync.js")).syncBenchmark,
  encryption: async () => (await import("./encryption.js")).encryptionBenchmark,
  backup: async () => (await import("./backup.js")).backupBenchmark,
  proxy: async () => (await import("./proxy.js")).proxyBenchmark,
  nodes: async () => (await import("./nodes.js")).nodesBenchmark,
  neighbour: async () => (await import("./neighbour.js")).neighbourBenchmark,
  soak: async () => (await import("./soak.js")).soakBenchmark,
  partitions: async () => (await import("./partitions.js")).partitionsBenchmark,
  tls: async () => (await import("./tls.js")).tlsBenchmark,
};

// Loads every benchmark's module and stops (the suite checks they all load outside vitest).
if (args.includes("--load-only")) {
  for (const load of Object.values(benchmarks)) await load();
  console.log(`loaded: ${Object.keys(benchmarks).join(", ")}`);
  process.exit(0);
}

if (only !== undefined && !(only in benchmarks)) {
  console.error(`unknown benchmark ${only}: one of ${Object.keys(benchmarks).join(", ")}`);
  process.exit(2);
}

const figures: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, quick };
if (only !== undefined) {
  Object.assign(figures, await (await benchmarks[only]!())({ quick }));
} else {
  const scratch = mkdtempSync(path.join(tmpdir(), "shoal-bench-run-"));
  const self = fileURLToPath(import.meta.url);
  let failed = false;
  for (const name of Object.keys(benchmarks)) {
    const out = path.join(scratch, `${name}.json`);
    const child = spawnSync(
      process.execPath,
      ["--import", "tsx", self, "--only", name, "--json", out, ...(quick ? ["--quick"] : [])],
      { stdio: "inherit" },
    );
    if (child.status !== 0) {
      console.error(`benchmark ${name} failed (exit ${child.status ?? child.signal})`);
      failed = true;
      continue;
    }
    const { date: _date, node: _node, quick: _quick, ...rest } = JSON.parse(readFileSync(out, "utf8"));
    Object.assign(figures, rest);
  }
  rmSync(scratch, { recursive: true, force: true });
  if (failed) process.exitCode = 1;
}
if (jsonFile) writeFileSync(jsonFile, JSON.stringify(figures, null, 2));
process.exit(process.exitCode ?? 0);
