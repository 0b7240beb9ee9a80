import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * `npm run bench` loads every benchmark (and the test helpers some of them share) outside vitest.
 * Asked for a benchmark that doesn't exist, it names the real ones once all of them have loaded:
 * a module that can't load there (a vitest hook run on import, say) fails this instead.
 */
describe("the benchmarks", () => {
  it("load outside vitest", () => {
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", "bench/run.ts", "--only", "no-such-benchmark"],
      {
        cwd: ROOT,
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
        timeout: 60_000,
      },
    );
    expect(run.stderr).toMatch(/unknown benchmark no-such-benchmark: one of dataplane, .*shards/);
    expect(run.status).toBe(2);
  });
});
