import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * `npm run bench` loads a benchmark's module only when it runs, so a machine without a package one
 * benchmark needs still runs the others. `--load-only` loads every one of them (and the test
 * helpers some share) outside vitest: a module that can't load there (a vitest hook run on import,
 * say) fails this. Asked for a benchmark that doesn't exist, it names the real ones and loads none.
 */
describe("the benchmarks", () => {
  const bench = (...args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", "bench/run.ts", ...args], {
      cwd: ROOT,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
      timeout: 60_000,
    });

  it("load outside vitest", () => {
    const run = bench("--load-only");
    expect(run.stdout).toMatch(/loaded: dataplane, .*shards/);
    expect(run.status, run.stderr).toBe(0);
  });

  it("name the real ones when asked for one that doesn't exist", () => {
    const run = bench("--only", "no-such-benchmark");
    expect(run.stderr).toMatch(/unknown benchmark no-such-benchmark: one of dataplane, .*shards/);
    expect(run.status).toBe(2);
  });
});
