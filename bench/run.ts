/**
 * `npm run bench`: every benchmark, each against a baseline measured in the same run.
 * Flags: --quick (short runs), --json <file> (also write the figures as JSON), --only <name>.
 */
import { writeFile } from "node:fs/promises";
import { dataPlaneBenchmark } from "./dataplane.js";
import { replicationBenchmark } from "./replication.js";
import { scaleBenchmark } from "./scale.js";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const jsonAt = args.indexOf("--json");
const onlyAt = args.indexOf("--only");
const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined;

const benchmarks: Record<string, (o: { quick: boolean }) => Promise<Record<string, unknown>>> = {
  dataplane: dataPlaneBenchmark,
  replication: replicationBenchmark,
  scale: scaleBenchmark,
};

const figures: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, quick };
for (const [name, bench] of Object.entries(benchmarks)) {
  if (only && only !== name) continue;
  Object.assign(figures, await bench({ quick }));
}
if (jsonAt >= 0 && args[jsonAt + 1]) await writeFile(args[jsonAt + 1]!, JSON.stringify(figures, null, 2));
process.exit(0);
