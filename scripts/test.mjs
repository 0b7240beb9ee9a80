// Runs the whole suite with vitest and ends with the line CI reads: "N passed, N failed".
// vitest's own summary is not in that form, so the counts come from its JSON report.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { summary } from "./test-summary.mjs";

const report = "vitest-report.json";
rmSync(report, { force: true });
const args = [
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile=${report}`,
  ...process.argv.slice(2),
];
const run = spawnSync(process.execPath, ["node_modules/vitest/vitest.mjs", ...args], { stdio: "inherit" });
const code = run.status ?? 1;
console.log(summary(code, report));
process.exit(code);
