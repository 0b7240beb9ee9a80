import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { BackupBucket } from "../../src/backup/bucket.js";
import { restoreDatabase } from "../../src/backup/restore.js";
import type { Shipper } from "../../src/backup/shipper.js";
import { keysUnder, sleep, tempDir, testShipper, waitFor } from "../helpers/backup.js";
import { TestPrimaries } from "../helpers/backup-primaries.js";
import { startTestS3, type TestS3 } from "../helpers/s3-server.js";

let s3: TestS3;
let dir: string;
let bucket: BackupBucket;
let node: TestPrimaries;
let shipper: Shipper | undefined;
let prefixes = 0;
/** Database ids are UUIDs, as Shoal makes them. */
const DB = randomUUID();
const ONE = randomUUID();
const TWO = randomUUID();

beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(async () => {
  await s3.close();
});
beforeEach(async () => {
  dir = await tempDir("backup");
  bucket = s3.client(`shipping-${++prefixes}`);
  node = new TestPrimaries(path.join(dir, "node-a"));
});
afterEach(async () => {
  await shipper?.stop();
  shipper = undefined;
  await node.close();
  await rm(dir, { recursive: true, force: true });
});

const values = (n: TestPrimaries, id: string) =>
  n.rows(id, "SELECT v FROM t ORDER BY rowid").map((r) => String(r[0]));

/** Restores `id` from the bucket into a fresh node's folder and reads it through the engine. */
async function restoredValues(id: string, at?: number): Promise<string[]> {
  const fresh = new TestPrimaries(path.join(dir, `restored-${Math.random().toString(36).slice(2)}`));
  try {
    const dest = fresh.path(id);
    mkdirSync(path.dirname(dest), { recursive: true });
    const outcome = await restoreDatabase(bucket, id, dest, { at });
    expect(outcome.kind).toBe("restored");
    fresh.adopt(id);
    return values(fresh, id);
  } finally {
    await fresh.close();
  }
}

function caughtUp(s: Shipper, n: TestPrimaries, ids: string[]): boolean {
  const status = s.status();
  return ids.every((id) => {
    const d = status.databases.find((x) => x.id === id);
    const local = n.log(n.path(id)).position();
    return d?.generation === local.generation && d.frame === local.frame && d.delayMs === 0;
  });
}

describe("continuous backup to an S3-compatible bucket", () => {
  it("has every write acknowledged longer ago than the reported delay, after the node's files are gone", async () => {
    for (const id of [ONE, TWO]) {
      node.create(id);
      node.write(id, "CREATE TABLE t (v TEXT)");
    }
    shipper = testShipper(bucket, node, path.join(dir, "work"), { intervalMs: 100 });
    shipper.start();
    const acked: Array<{ id: string; v: string; at: number }> = [];
    const until = Date.now() + 1500;
    for (let i = 0; Date.now() < until; i++) {
      for (const id of [ONE, TWO]) {
        const v = `${id}-${i}`;
        acked.push({ id, v, at: node.write(id, "INSERT INTO t VALUES (?)", [v]).at });
      }
      await sleep(5);
    }
    // The node is lost here: whatever the bucket has now is all there is.
    const lostAt = Date.now();
    const { delayMs } = shipper.status();
    await shipper.stop();
    shipper = undefined;
    expect(delayMs).toBeLessThan(10_000);
    await node.close();
    await rm(path.join(dir, "node-a"), { recursive: true, force: true });

    for (const id of [ONE, TWO]) {
      const rows = await restoredValues(id);
      const written = acked.filter((a) => a.id === id).map((a) => a.v);
      const mustHave = acked.filter((a) => a.id === id && a.at < lostAt - delayMs).map((a) => a.v);
      // Exactly the state after some commit: a prefix of the writes, and at least every one acknowledged
      // longer ago than the delay (a write acknowledged in the very millisecond the delay starts may not be).
      expect(rows).toEqual(written.slice(0, rows.length));
      expect(rows.length).toBeGreaterThanOrEqual(mustHave.length);
    }
  });

  it("ships everything once writes stop, and reports no delay then", async () => {
    node.create(DB);
    node.write(DB, "CREATE TABLE t (v TEXT)");
    for (let i = 0; i < 20; i++) node.write(DB, "INSERT INTO t VALUES (?)", [`row-${i}`]);
    shipper = testShipper(bucket, node, path.join(dir, "work"));
    const shipped: number[] = [];
    shipper.onShipped((e) => shipped.push(e.frame));
    shipper.start();
    await waitFor("shipping", () => caughtUp(shipper!, node, [DB]));
    expect(shipper.status().delayMs).toBe(0);
    expect(shipped.length).toBeGreaterThan(0);
    node.write(DB, "INSERT INTO t VALUES ('late')");
    await waitFor("the late row", () => caughtUp(shipper!, node, [DB]));
    expect(await restoredValues(DB)).toEqual([...Array.from({ length: 20 }, (_, i) => `row-${i}`), "late"]);
  });

  it("resumes after a crash and restart from what the bucket has, without uploading it again", async () => {
    node.create(DB);
    node.write(DB, "CREATE TABLE t (v TEXT)");
    node.write(DB, "INSERT INTO t VALUES ('before')");
    shipper = testShipper(bucket, node, path.join(dir, "work"));
    await shipper.pass();
    const before = await keysUnder(bucket);
    const end = shipper.status().databases[0]!;
    expect(before.filter((k) => k.includes("/snapshot-"))).toHaveLength(1);
    await shipper.stop();

    // The process dies (no checkpoint at exit): a new one opens the same files with a new frame
    // log and a new shipper that knows only what the bucket says.
    const crashed = node;
    node = new TestPrimaries(path.join(dir, "node-a"));
    node.adopt(DB);
    node.write(DB, "INSERT INTO t VALUES ('after')");
    shipper = testShipper(bucket, node, path.join(dir, "work"));
    const uploads: Array<{ generation: number; frame: number }> = [];
    shipper.onShipped((e) => uploads.push(e));
    await shipper.pass();
    const after = await keysUnder(bucket);
    const added = after.filter((k) => !before.includes(k));
    const first = String(end.frame! + 1).padStart(10, "0");
    expect(added).toEqual([expect.stringContaining(`/0000000001/frames-${first}-`)]);
    expect(before.every((k) => after.includes(k))).toBe(true);
    expect(uploads).toHaveLength(1);
    expect(await restoredValues(DB)).toEqual(["before", "after"]);
    await crashed.close();
  });

  it("after a clean restart, archives the generation its exit ended and goes on in the next", async () => {
    node.create(DB);
    node.write(DB, "CREATE TABLE t (v TEXT)");
    node.write(DB, "INSERT INTO t VALUES ('before')");
    shipper = testShipper(bucket, node, path.join(dir, "work"));
    await shipper.pass();
    const before = await keysUnder(bucket);
    await shipper.stop();
    await node.close(); // closing the last connection checkpoints: generation 1 ends

    node = new TestPrimaries(path.join(dir, "node-a"));
    node.adopt(DB);
    node.write(DB, "INSERT INTO t VALUES ('after')");
    shipper = testShipper(bucket, node, path.join(dir, "work"));
    await shipper.pass();
    const after = await keysUnder(bucket);
    expect(after.filter((k) => !before.includes(k))).toEqual([
      expect.stringMatching(/\/0000000001\/archive-\d+\.gz$/),
      expect.stringMatching(/\/0000000002\/frames-0000000001-\d+\.gz$/),
    ]);
    // The snapshot stays the only one; generation 1's small objects gave way to its archive.
    expect(after.filter((k) => k.includes("/snapshot-"))).toEqual(
      before.filter((k) => k.includes("/snapshot-")),
    );
    expect(after.filter((k) => k.includes("/0000000001/frames-"))).toEqual([]);
    expect(await restoredValues(DB)).toEqual(["before", "after"]);
  });

  it("follows the log across a checkpoint: the finished generation becomes one archive object", async () => {
    node.create(DB);
    node.write(DB, "CREATE TABLE t (v TEXT)");
    node.write(DB, "INSERT INTO t VALUES ('g1-a')");
    shipper = testShipper(bucket, node, path.join(dir, "work"));
    await shipper.pass();
    const midway = node.write(DB, "INSERT INTO t VALUES ('g1-b')").at;
    await sleep(5);
    // Not shipped yet when the generation ends: its last frames come from the archive.
    node.rollover(DB);
    node.write(DB, "INSERT INTO t VALUES ('g2-a')");
    await shipper.pass();
    const keys = await keysUnder(bucket);
    expect(keys.filter((k) => k.includes("/0000000001/archive-"))).toHaveLength(1);
    expect(keys.filter((k) => k.includes("/0000000001/frames-"))).toEqual([]);
    expect(keys.filter((k) => k.includes("/0000000002/frames-"))).toHaveLength(1);
    expect(keys.filter((k) => k.includes("/snapshot-"))).toHaveLength(1);
    expect(await restoredValues(DB)).toEqual(["g1-a", "g1-b", "g2-a"]);
    expect(await restoredValues(DB, midway)).toEqual(["g1-a", "g1-b"]);
  });

  it("starts again from a snapshot when a generation's frames are lost to a checkpoint it didn't make", async () => {
    node.create(DB);
    node.write(DB, "CREATE TABLE t (v TEXT)");
    node.write(DB, "INSERT INTO t VALUES ('a')");
    shipper = testShipper(bucket, node, path.join(dir, "work"));
    await shipper.pass();
    node.write(DB, "INSERT INTO t VALUES ('b')");
    // Behind the frame log's back, as another program could: generation 1's last frames are gone.
    const hosted = node.hosted.at(node.path(DB));
    const conn = hosted.checkout();
    conn.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    hosted.checkin(conn);
    node.write(DB, "INSERT INTO t VALUES ('c')");
    await shipper.pass();
    const snapshots = (await keysUnder(bucket)).filter((k) => k.includes("/snapshot-"));
    expect(snapshots).toHaveLength(2);
    expect(snapshots[1]).toContain("/0000000002/");
    expect(await restoredValues(DB)).toEqual(["a", "b", "c"]);
  });

  it("never uploads over a history its log is behind, and says why", async () => {
    node.create(DB);
    node.write(DB, "CREATE TABLE t (v TEXT)");
    node.write(DB, "INSERT INTO t VALUES ('a')");
    node.rollover(DB);
    node.write(DB, "INSERT INTO t VALUES ('b')");
    shipper = testShipper(bucket, node, path.join(dir, "work"));
    await shipper.pass();
    await shipper.stop();
    const before = await keysUnder(bucket);
    await node.close();

    // The same database id, but a log started over (its folder lost): generation 1 again.
    node = new TestPrimaries(path.join(dir, "node-b"));
    node.create(DB);
    node.write(DB, "CREATE TABLE t (v TEXT)");
    shipper = testShipper(bucket, node, path.join(dir, "work"));
    await shipper.pass();
    const status = shipper.status().databases[0]!;
    expect(status.diverged).toMatch(/generation 2/);
    expect(await keysUnder(bucket)).toEqual(before);
  });

  it("keeps the database's labels in database.json beside its generations", async () => {
    node.create(DB);
    node.write(DB, "CREATE TABLE t (v TEXT)");
    shipper = testShipper(bucket, node, path.join(dir, "work"));
    await shipper.pass();
    const manifest = JSON.parse((await bucket.get(`${bucket.prefix}/${DB}/database.json`)).body.toString());
    expect(manifest).toMatchObject({ format: 1, id: DB, labels: { node: "node-a", location: "home" } });
    expect(existsSync(path.join(dir, "work"))).toBe(true);
  });
});
