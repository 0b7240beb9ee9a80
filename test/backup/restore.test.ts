import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { BackupBucket } from "../../src/backup/bucket.js";
import { DamagedObjectError } from "../../src/backup/objects.js";
import { restoreDatabase } from "../../src/backup/restore.js";
import { bootstrapLocation, listBackedUpDatabases, restoreAll } from "../../src/backup/restore-all.js";
import type { Shipper } from "../../src/backup/shipper.js";
import { FrameLog } from "../../src/engine/frame-log.js";
import { keysUnder, sleep, tempDir, testShipper } from "../helpers/backup.js";
import { TestPrimaries } from "../helpers/backup-primaries.js";
import { startTestS3, type TestS3 } from "../helpers/s3-server.js";

let s3: TestS3;
let dir: string;
let bucket: BackupBucket;
let node: TestPrimaries;
let shipper: Shipper;
let prefixes = 0;
const opened: TestPrimaries[] = [];

beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(async () => {
  await s3.close();
});
beforeEach(async () => {
  dir = await tempDir("restore");
  bucket = s3.client(`restore-${++prefixes}`);
  node = new TestPrimaries(path.join(dir, "node-a"));
  shipper = testShipper(bucket, node, path.join(dir, "work"));
});
afterEach(async () => {
  await shipper.stop();
  for (const n of [node, ...opened.splice(0)]) await n.close();
  await rm(dir, { recursive: true, force: true });
});

const values = (n: TestPrimaries, id: string) =>
  n.rows(id, "SELECT v FROM t ORDER BY rowid").map((r) => String(r[0]));

/** A fresh node folder, and the file a database of it would have. */
function freshNode(): TestPrimaries {
  const n = new TestPrimaries(path.join(dir, `node-${opened.length + 2}`));
  opened.push(n);
  return n;
}

function destIn(n: TestPrimaries, id: string): string {
  const dest = n.path(id);
  mkdirSync(path.dirname(dest), { recursive: true });
  return dest;
}

/** Writes rows one commit each, a few milliseconds apart; returns each commit's time. */
async function writeRows(id: string, rows: string[]): Promise<number[]> {
  const times: number[] = [];
  for (const v of rows) {
    times.push(node.write(id, "INSERT INTO t VALUES (?)", [v]).at);
    await sleep(3);
  }
  return times;
}

function newDatabase(): string {
  const id = randomUUID();
  node.create(id);
  node.write(id, "CREATE TABLE t (v TEXT)");
  return id;
}

describe("restoring from the bucket", () => {
  it("restores a moment in the past: exactly the rows committed by then, across generations", async () => {
    const id = newDatabase();
    // The bucket's history starts at its first snapshot, which the first pass takes.
    await shipper.pass();
    const t1 = await writeRows(id, ["a", "b", "c"]);
    await shipper.pass();
    node.rollover(id);
    node.write(id, "DELETE FROM t WHERE v = 'a'");
    // A moment clearly between the delete and the next insert: a write's own time is taken after
    // its commit, so on a busy machine "just before it" can't be read off it.
    await sleep(5);
    const between = Date.now();
    await sleep(5);
    const t2 = await writeRows(id, ["d", "e"]);
    await shipper.pass();
    const at = async (moment: number) => {
      const n = freshNode();
      const outcome = await restoreDatabase(bucket, id, destIn(n, id), { at: moment });
      if (outcome.kind !== "restored") return outcome.kind;
      n.adopt(id);
      return values(n, id);
    };
    expect(await at(t1[1]!)).toEqual(["a", "b"]);
    expect(await at(t1[1]! + 1)).toEqual(["a", "b"]);
    expect(await at(t1[2]!)).toEqual(["a", "b", "c"]);
    expect(await at(between)).toEqual(["b", "c"]);
    expect(await at(t2[1]!)).toEqual(["b", "c", "d", "e"]);
    expect(await at(Date.now())).toEqual(["b", "c", "d", "e"]);
  });

  it("refuses a moment before the oldest snapshot, one in the future, and a database it never saw", async () => {
    const id = newDatabase();
    await writeRows(id, ["a"]);
    await shipper.pass();
    const n = freshNode();
    const before = await restoreDatabase(bucket, id, destIn(n, id), { at: 1000 });
    expect(before).toMatchObject({ kind: "before-history" });
    const earliest = (before as { earliest: number }).earliest;
    expect(earliest).toBeGreaterThan(1000);
    expect(await restoreDatabase(bucket, id, destIn(n, id), { at: Date.now() + 60_000 })).toMatchObject({
      kind: "future",
    });
    expect(await restoreDatabase(bucket, randomUUID(), destIn(n, id))).toEqual({ kind: "missing" });
    expect(existsSync(n.path(id))).toBe(false);
  });

  it("restores onto another node as a primary whose shipping goes on in the same folder", async () => {
    const id = newDatabase();
    await writeRows(id, ["a", "b"]);
    node.rollover(id);
    await writeRows(id, ["c"]);
    await shipper.pass();
    await shipper.stop();

    const b = freshNode();
    const outcome = await restoreDatabase(bucket, id, destIn(b, id));
    expect(outcome).toMatchObject({ kind: "restored", generation: 2, next: { generation: 3 } });
    expect(new FrameLog(b.path(id)).generation).toBe(3);
    b.adopt(id);
    b.write(id, "INSERT INTO t VALUES ('on b')");
    shipper = testShipper(bucket, b, path.join(dir, "work-b"));
    await shipper.pass();
    expect(shipper.status().databases[0]).toMatchObject({ diverged: undefined, generation: 3, delayMs: 0 });
    const c = freshNode();
    await restoreDatabase(bucket, id, destIn(c, id));
    c.adopt(id);
    expect(values(c, id)).toEqual(["a", "b", "c", "on b"]);
  });

  it("restores everything a node held, chosen by the labels in each database.json", async () => {
    const ids = [newDatabase(), newDatabase(), newDatabase()];
    for (const [i, id] of ids.entries()) await writeRows(id, [`row of ${i}`]);
    await shipper.pass();
    expect((await listBackedUpDatabases(bucket)).map((d) => d.id).sort()).toEqual([...ids].sort());
    await node.close();
    await rm(path.join(dir, "node-a"), { recursive: true, force: true });

    const fresh = freshNode();
    const results = await restoreAll(bucket, (id, manifest) =>
      manifest?.labels.node === "node-a" ? destIn(fresh, id) : undefined,
    );
    expect(results.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(results.every((r) => r.outcome?.kind === "restored")).toBe(true);
    for (const [i, id] of ids.entries()) {
      fresh.adopt(id);
      expect(values(fresh, id)).toEqual([`row of ${i}`]);
    }
    node = new TestPrimaries(path.join(dir, "unused"));
  });

  it("bootstraps a replica's file without a frame log, at the primary's generation and frame", async () => {
    const id = newDatabase();
    await writeRows(id, ["a", "b"]);
    await shipper.pass();
    const local = node.log(node.path(id)).position();
    const replica = freshNode();
    const dest = destIn(replica, id);
    const outcome = await bootstrapLocation(bucket, id, dest, "replica");
    expect(outcome).toMatchObject({ kind: "restored", generation: local.generation, frame: local.frame });
    expect(existsSync(`${dest}.log`)).toBe(false);
    replica.adopt(id);
    expect(values(replica, id)).toEqual(["a", "b"]);
  });

  it("reads listings page by page", async () => {
    const id = newDatabase();
    for (let i = 0; i < 6; i++) {
      await writeRows(id, [`r${i}`]);
      await shipper.pass();
    }
    const paged = s3.client(bucket.prefix, { pageSize: 2 });
    expect((await keysUnder(paged)).length).toBeGreaterThan(4);
    const n = freshNode();
    expect(await restoreDatabase(paged, id, destIn(n, id))).toMatchObject({ kind: "restored" });
    n.adopt(id);
    expect(values(n, id)).toEqual(["r0", "r1", "r2", "r3", "r4", "r5"]);
  });

  it("refuses a damaged object and leaves no file behind", async () => {
    const id = newDatabase();
    await writeRows(id, ["a"]);
    await shipper.pass();
    await writeRows(id, ["b"]);
    await shipper.pass();
    const frames = (await keysUnder(bucket)).filter((k) => k.includes("/frames-")).at(-1)!;
    const { body, metadata } = await bucket.get(frames);
    body[body.length - 12] = (body[body.length - 12] ?? 0) ^ 0xff;
    await bucket.put(frames, body, metadata);
    const n = freshNode();
    const dest = destIn(n, id);
    await expect(restoreDatabase(bucket, id, dest)).rejects.toBeInstanceOf(DamagedObjectError);
    expect(readdirSync(path.dirname(dest))).toEqual([]);
  });
});
