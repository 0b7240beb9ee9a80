/**
 * Restores from the bucket: how long rebuilding a database takes (download, unpack, replay of the
 * frames shipped after its snapshot, quick_check), against copying the same file on the same disk
 * in the same run. The bucket is a real S3-compatible server (s3rver) on loopback.
 */
import { randomUUID } from "node:crypto";
import { copyFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { restoreDatabase } from "../src/backup/restore.js";
import { testShipper } from "../test/helpers/backup.js";
import { TestPrimaries } from "../test/helpers/backup-primaries.js";
import { startTestS3, type TestS3 } from "../test/helpers/s3-server.js";
import { type BenchOptions, fmt, table } from "./harness.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface RestoreRun {
  mib: number;
  frames: number;
  copyMs: number;
  latestMs: number;
  pointInTimeMs: number;
}

/** A database of about `mib` MiB, shipped as a snapshot, then `updates` small commits as frames. */
async function run(mib: number, updates: number): Promise<RestoreRun> {
  const s3 = await startTestS3();
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-restore-"));
  const node = new TestPrimaries(path.join(dir, "node"));
  try {
    return await measure(s3, dir, node, mib, updates);
  } finally {
    // Also on failure: s3rver runs in a child process that would outlive the bench.
    await node.close();
    await s3.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function measure(
  s3: TestS3,
  dir: string,
  node: TestPrimaries,
  mib: number,
  updates: number,
): Promise<RestoreRun> {
  const db = randomUUID();
  node.create(db);
  node.write(db, "CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB)");
  for (let i = 0; i < mib; i++) {
    node.write(
      db,
      "INSERT INTO blobs (body) SELECT randomblob(4000) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 256) SELECT i FROM n)",
    );
  }
  node.rollover(db);
  const bucket = s3.client("bench-restore");
  const shipper = testShipper(bucket, node, path.join(dir, "work"), { intervalMs: 100 });
  shipper.start();
  const snapshotted = () => shipper.status().databases[0]?.generation !== undefined;
  while (!snapshotted() || shipper.status().delayMs > 0) await sleep(20);
  let middle = 0;
  for (let i = 0; i < updates; i++) {
    node.write(db, "UPDATE blobs SET body = randomblob(100) WHERE id = ?", [1 + ((i * 7919) % (mib * 256))]);
    if (i === Math.floor(updates / 2)) middle = Date.now();
  }
  await sleep(150);
  while (shipper.status().delayMs > 0) await sleep(20);
  await shipper.stop();
  const frames = node.log(node.path(db)).position().frame;

  let t = performance.now();
  copyFileSync(node.path(db), path.join(dir, "copy.db"));
  const copyMs = performance.now() - t;
  t = performance.now();
  const latest = await restoreDatabase(bucket, db, path.join(dir, "latest.db"));
  const latestMs = performance.now() - t;
  t = performance.now();
  const pit = await restoreDatabase(bucket, db, path.join(dir, "pit.db"), { at: middle });
  const pointInTimeMs = performance.now() - t;
  if (latest.kind !== "restored" || pit.kind !== "restored") {
    throw new Error(`restore failed: ${JSON.stringify({ latest, pit, middle })}`);
  }
  const size = statSync(path.join(dir, "latest.db")).size / 1048576;
  return { mib: Math.round(size), frames, copyMs, latestMs, pointInTimeMs };
}

export async function backupRestoreBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  const runs: RestoreRun[] = [];
  for (const mib of opts.quick ? [8] : [16, 64]) runs.push(await run(mib, opts.quick ? 200 : 1000));
  console.log(
    "\nRestore from the bucket (s3rver on loopback): a snapshot plus the frames shipped after it\n",
  );
  console.log(
    table(
      ["database", "frames replayed", "file copy", "restore latest", "restore to a moment", "latest / copy"],
      runs.map((r) => [
        `${r.mib} MiB`,
        fmt(r.frames),
        `${fmt(r.copyMs)} ms`,
        `${fmt(r.latestMs)} ms`,
        `${fmt(r.pointInTimeMs)} ms`,
        `${fmt(r.latestMs / r.copyMs)}x`,
      ]),
    ),
  );
  return { backupRestore: runs };
}
