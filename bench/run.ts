/**
 * `npm run bench`: every benchmark, each against a baseline measured in the same run.
 * Flags: --quick (short runs), --json <file> (also write the figures as JSON), --only <name>.
 *
 * Without --only, each benchmark runs in a process of its own: one benchmark's leftovers (heap,
 * native memory, open files) must not show up in the next one's figures, memory above all.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { backupBenchmark } from "./backup.js";
import { batchBenchmark } from "./batch.js";
import { commitLogBenchmark } from "./commit-log.js";
import { dataPlaneBenchmark } from "./dataplane.js";
import { encryptionBenchmark } from "./encryption.js";
import { nodesBenchmark } from "./nodes.js";
import { proxyBenchmark } from "./proxy.js";
import { replicationBenchmark } from "./replication.js";
import { scaleBenchmark } from "./scale.js";
import { shardsBenchmark } from "./shards.js";
import { syncBenchmark } from "./sync.js";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const jsonAt = args.indexOf("--json");
const jsonFile = jsonAt >= 0 ? args[jsonAt + 1] : undefined;
const onlyAt = args.indexOf("--only");
const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined;

const benchmarks: Record<string, (o: { quick: boolean }) => Promise<Record<string, unknown>>> = {
  dataplane: dataPlaneBenchmark,
  "commit-log": commitLogBenchmark,
  batch: batchBenchmark,
  replication: replicationBenchmark,
  scale: scaleBenchmark,
  shards: shardsBenchmark,
  sync: syncBenchmark,
  encryption: encryptionBenchmark,
  backup: backupBenchmark,
  proxy: proxyBenchmark,
  nodes: nodesBenchmark,
};

if (only !== undefined && !(only in benchmarks)) {
  console.error(`unknown benchmark ${only}: one of ${Object.keys(benchmarks).join(", ")}`);
  process.exit(2);
}

const figures: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, quick };
if (only !== undefined) {
  Object.assign(figures, await benchmarks[only]!({ quick }));
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
