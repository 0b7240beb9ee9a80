/**
 * Continuous backup: how far the bucket trails the primary under a steady write load (from a
 * write's acknowledgement to the bucket acknowledging an upload that holds it), against the
 * writes' own acknowledgement time in the same run, with the shipper on and off (its cost to the
 * commit path). The bucket is a real S3-compatible server (s3rver) on loopback, in its own process.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { testShipper } from "../test/helpers/backup.js";
import { TestPrimaries } from "../test/helpers/backup-primaries.js";
import { startTestS3 } from "../test/helpers/s3-server.js";
import { type BenchOptions, fmt, table } from "./harness.js";

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Write {
  db: string;
  generation: number;
  frame: number;
  ackAt: number;
  ackMs: number;
}

/** Writes one row every `everyMs` round-robin over `dbs`, for `count` writes. */
async function steadyWrites(
  node: TestPrimaries,
  dbs: string[],
  count: number,
  everyMs: number,
): Promise<Write[]> {
  const out: Write[] = [];
  for (let i = 0; i < count; i++) {
    const db = dbs[i % dbs.length]!;
    const started = performance.now();
    const p = node.write(db, "INSERT INTO events (at, body) VALUES (?, ?)", [Date.now(), "x".repeat(200)]);
    out.push({
      db,
      generation: p.generation,
      frame: p.frame,
      ackAt: p.at,
      ackMs: performance.now() - started,
    });
    await sleep(everyMs);
  }
  return out;
}

async function run(intervalMs: number, opts: BenchOptions) {
  const s3 = await startTestS3();
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-backup-"));
  const node = new TestPrimaries(path.join(dir, "node"));
  const dbs = Array.from({ length: 4 }, () => randomUUID());
  for (const db of dbs) {
    node.create(db);
    node.write(db, "CREATE TABLE events (id INTEGER PRIMARY KEY, at INTEGER, body TEXT)");
  }
  const count = opts.quick ? 300 : 1500;
  const everyMs = 5;
  // The baseline: the same writes with no shipper running.
  const without = await steadyWrites(node, dbs, count, everyMs);

  const shipper = testShipper(s3.client("bench"), node, path.join(dir, "work"), { intervalMs });
  const shipped = new Map<string, Array<{ generation: number; frame: number; at: number }>>();
  shipper.onShipped((e) => shipped.set(e.dbId, [...(shipped.get(e.dbId) ?? []), e]));
  shipper.start();
  while (shipper.status().databases.length < dbs.length || shipper.status().delayMs > 0) await sleep(20);
  const reported: number[] = [];
  const sampler = setInterval(() => reported.push(shipper.status().delayMs), 50);
  const withShipper = await steadyWrites(node, dbs, count, everyMs);
  while (shipper.status().delayMs > 0) await sleep(20);
  clearInterval(sampler);
  await shipper.stop();

  const delays = withShipper.map((w) => {
    const hit = (shipped.get(w.db) ?? []).find(
      (e) => e.generation > w.generation || (e.generation === w.generation && e.frame >= w.frame),
    );
    return hit ? hit.at - w.ackAt : Number.NaN;
  });
  await node.close();
  await s3.close();
  await rm(dir, { recursive: true, force: true });
  return {
    intervalMs,
    ackP50: percentile(
      without.map((w) => w.ackMs),
      0.5,
    ),
    ackP99: percentile(
      without.map((w) => w.ackMs),
      0.99,
    ),
    ackShippingP50: percentile(
      withShipper.map((w) => w.ackMs),
      0.5,
    ),
    ackShippingP99: percentile(
      withShipper.map((w) => w.ackMs),
      0.99,
    ),
    delayP50: percentile(delays, 0.5),
    delayP99: percentile(delays, 0.99),
    delayMax: Math.max(...delays),
    reportedP99: percentile(reported, 0.99),
    uploads: [...shipped.values()].reduce((n, l) => n + l.length, 0),
  };
}

export async function backupBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  const runs = [];
  for (const interval of [1000, 100]) runs.push(await run(interval, opts));
  console.log(
    "\nContinuous backup: bucket delay under steady writes (4 databases, 1 write / 5 ms, s3rver on loopback)\n",
  );
  console.log(
    table(
      [
        "interval",
        "ack p50",
        "ack p99",
        "ack p50 shipping",
        "ack p99 shipping",
        "delay p50",
        "delay p99",
        "delay max",
        "delay p50 / ack p50",
        "uploads",
      ],
      runs.map((r) => [
        `${r.intervalMs} ms`,
        `${fmt(r.ackP50, 3)} ms`,
        `${fmt(r.ackP99, 3)} ms`,
        `${fmt(r.ackShippingP50, 3)} ms`,
        `${fmt(r.ackShippingP99, 3)} ms`,
        `${fmt(r.delayP50)} ms`,
        `${fmt(r.delayP99)} ms`,
        `${fmt(r.delayMax)} ms`,
        `${fmt(r.delayP50 / r.ackP50)}x`,
        fmt(r.uploads),
      ]),
    ),
  );
  return { backup: runs };
}
