/**
 * Batches of many distinct statements: one Hrana v2 batch of N steps where the texts differ (each
 * must be prepared, and the statement cache can't hold them all), against the same batch of one
 * repeated text measured in the same run (prepared once, every other step a cache hit). The ratio
 * distinct / repeated is the cost of preparing; it stays flat as N grows when that cost is linear.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLogger } from "../src/lib/logger.js";
import { startShoal } from "../src/main.js";
import { benchConfig } from "./config.js";
import { type BenchOptions, fmt, table } from "./harness.js";

const ADMIN = "bench-admin-token-0123456789";

interface Case {
  name: string;
  steps: number;
  /** The SQL text of step i. */
  sql(i: number): string;
}

const cases = (quick: boolean): Array<{ distinct: Case; repeated: Case }> => {
  const big = quick ? 2_000 : 4_000;
  const small = quick ? 1_000 : 2_000;
  return [
    {
      distinct: { name: `${big} steps, 200 distinct texts`, steps: big, sql: (i) => `SELECT ?, ${i % 200}` },
      repeated: { name: `${big} steps, one text`, steps: big, sql: () => "SELECT ?, 0" },
    },
    ...[small, 4 * small].map((n) => ({
      distinct: { name: `${n} steps, all distinct`, steps: n, sql: (i: number) => `SELECT ?, ${i}` },
      repeated: { name: `${n} steps, one text`, steps: n, sql: () => "SELECT ?, 0" },
    })),
  ];
};

function batchBody(c: Case): string {
  const steps = Array.from({ length: c.steps }, (_, i) => ({
    stmt: { sql: c.sql(i), args: [{ type: "integer", value: String(i) }] },
  }));
  return JSON.stringify({ requests: [{ type: "batch", batch: { steps } }, { type: "close" }] });
}

export async function batchBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-batch-"));
  const shoal = await startShoal(benchConfig(path.join(dir, "shoal"), ADMIN), {
    log: createLogger("silent"),
    announce: () => {},
  });
  const api = (p: string, body?: unknown) =>
    fetch(`${shoal.url}${p}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((r) => r.json() as Promise<Record<string, any>>);
  await api("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" });
  await api("/v1/organizations/admin/databases", { name: "bench", group: "default" });
  const jwt = (await api("/v1/organizations/admin/databases/bench/auth/tokens")).jwt as string;

  const timeBatch = async (c: Case): Promise<number> => {
    const body = batchBody(c);
    const started = performance.now();
    const r = await fetch(`${shoal.url}/db/admin/bench/v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${jwt}` },
      body,
    });
    const json = (await r.json()) as { results: Array<{ type: string; response?: any }> };
    const ms = performance.now() - started;
    const errors = json.results[0]?.response?.result?.step_errors?.filter((e: unknown) => e !== null) ?? [1];
    if (r.status !== 200 || errors.length > 0)
      throw new Error(`${c.name}: ${JSON.stringify(json).slice(0, 300)}`);
    return ms;
  };

  const rounds = opts.quick ? 1 : 3;
  const rows: string[][] = [];
  const results: Array<Record<string, unknown>> = [];
  for (const { distinct, repeated } of cases(opts.quick)) {
    let best = { distinct: Infinity, repeated: Infinity };
    // Alternate the two so drift on a shared machine hits both alike; keep each one's best.
    for (let round = 0; round < rounds; round++) {
      best = {
        repeated: Math.min(best.repeated, await timeBatch(repeated)),
        distinct: Math.min(best.distinct, await timeBatch(distinct)),
      };
    }
    const ratio = best.distinct / best.repeated;
    results.push({ scenario: distinct.name, distinctMs: best.distinct, repeatedMs: best.repeated, ratio });
    rows.push([distinct.name, fmt(best.repeated, 1), fmt(best.distinct, 1), fmt(ratio, 2)]);
  }
  await shoal.close();
  await rm(dir, { recursive: true, force: true });

  console.log(`\nBatches of distinct statements: one v2 batch over HTTP, milliseconds (best of ${rounds})`);
  console.log("(baseline: the same number of steps with one repeated text)\n");
  console.log(table(["batch", "one text ms", "distinct ms", "ratio"], rows));
  console.log(
    "\nGoal: 4,000 steps of 200 texts well under a second; the ratio of the all-distinct batches stays flat\n" +
      "from 2,000 to 8,000 steps (linear work; it grew with the steps when every prepare walked every statement).",
  );
  return { batches: results };
}
