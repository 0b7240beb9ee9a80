import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import type { BackupBucket } from "../../src/backup/bucket.js";
import { Shipper, type ShipperOptions } from "../../src/backup/shipper.js";
import type { BackupSource } from "../../src/backup/source.js";
import { readOnlyFile } from "../../src/lib/read-only-file.js";

export const tempDir = (name: string) => mkdtemp(path.join(tmpdir(), `shoal-${name}-`));

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A shipper with short intervals, for tests. */
export function testShipper(
  bucket: BackupBucket,
  source: BackupSource,
  workDir: string,
  opts: Partial<ShipperOptions> = {},
): Shipper {
  return new Shipper({
    bucket,
    source,
    workDir,
    intervalMs: 50,
    snapshotIntervalMs: 3_600_000,
    retentionMs: 24 * 3_600_000,
    maxBackoffMs: 300,
    ...opts,
  });
}

/** The values of column `v` of table `t` in a database file, in rowid order, read with libsql. */
export function valuesIn(file: string): string[] {
  const db = new Database(readOnlyFile(file));
  try {
    return (db.prepare("SELECT v FROM t ORDER BY rowid").raw(true).all() as string[][]).map((r) => r[0]!);
  } finally {
    db.close();
  }
}

/** Every key under the client's prefix. */
export async function keysUnder(bucket: BackupBucket): Promise<string[]> {
  const out: string[] = [];
  for await (const o of bucket.list(`${bucket.prefix}/`)) out.push(o.key);
  return out;
}
