// Prints "N passed, N failed" from vitest's JSON report. Used by scripts/test.mjs (npm test) and by
// .ci/run, which repeats the line so it is the last one CI sees. Usage: test-summary.mjs [exit code]
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

export function summary(exitCode, reportPath = "vitest-report.json") {
  let passed = 0;
  let failed = 0;
  try {
    const r = JSON.parse(readFileSync(reportPath, "utf8"));
    passed = r.numPassedTests;
    // A file that fails to load has no failed tests of its own; count it so it can't pass silently.
    failed =
      r.numFailedTests +
      r.testResults.filter((f) => f.status === "failed" && f.assertionResults.length === 0).length;
  } catch {
    failed = 1;
  }
  if (exitCode !== 0 && failed === 0) failed = 1;
  return `${passed} passed, ${failed} failed`;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(summary(Number(process.argv[2] ?? 0)));
}
