import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCatalog } from "../../src/backup/frames-shipping.js";
import { restoreDatabase } from "../../src/backup/restore.js";
import { sleep, tempDir, testShipper } from "../helpers/backup.js";
import { TestPrimaries } from "../helpers/backup-primaries.js";
import { startTestS3, type TestS3 } from "../helpers/s3-server.js";

let s3: TestS3;
let dir: string;

beforeAll(async () => {
  s3 = await startTestS3();
  dir = await tempDir("retention");
});
afterAll(async () => {
  await s3.close();
  await rm(dir, { recursive: true, force: true });
});

describe("retention in the bucket", () => {
  it("takes snapshots periodically and deletes what only moments past the retention need", async () => {
    const bucket = s3.client("retention");
    const node = new TestPrimaries(path.join(dir, "node-a"));
    const id = randomUUID();
    node.create(id);
    node.write(id, "CREATE TABLE t (v TEXT)");
    const shipper = testShipper(bucket, node, path.join(dir, "work"), {
      snapshotIntervalMs: 200,
      retentionMs: 700,
      pruneEveryMs: 0,
    });
    const acks: Array<{ v: string; at: number }> = [];
    const started = Date.now();
    for (let i = 0; Date.now() - started < 2500; i++) {
      const v = `r${i}`;
      acks.push({ v, at: node.write(id, "INSERT INTO t VALUES (?)", [v]).at });
      if (i % 5 === 4) node.rollover(id);
      await shipper.pass();
      await sleep(40);
    }
    const beforeLastPass = Date.now();
    await shipper.pass();
    const now = Date.now();
    const { catalog } = await readCatalog(bucket, id);
    const snapshots = catalog.snapshots();
    expect(snapshots.length).toBeGreaterThan(1);
    // Nothing older than needed: the oldest snapshot is the last one taken before the cutoff.
    expect(snapshots[1]!.validFrom).toBeGreaterThan(beforeLastPass - 700);
    expect(snapshots[0]!.validFrom).toBeLessThanOrEqual(now - 700);
    expect(catalog.lastGeneration).toBeGreaterThan(snapshots[0]!.generation);
    expect(catalog.all().every((o) => o.generation >= snapshots[0]!.generation)).toBe(true);

    const restoreAt = async (at?: number) => {
      const fresh = new TestPrimaries(path.join(dir, `restored-${Math.random()}`));
      const dest = fresh.path(id);
      mkdirSync(path.dirname(dest), { recursive: true });
      const outcome = await restoreDatabase(bucket, id, dest, { at });
      fresh.adopt(id);
      const rows = outcome.kind === "restored" ? fresh.rows(id, "SELECT v FROM t ORDER BY rowid") : [];
      await fresh.close();
      return { outcome, values: rows.map((r) => String(r[0])) };
    };
    expect((await restoreAt()).values).toEqual(acks.map((a) => a.v));
    expect((await restoreAt(started)).outcome.kind).toBe("before-history");
    // A moment within the retention, between two commits: exactly the rows acknowledged by then.
    const k = acks.findIndex((a) => a.at > now - 500);
    const moment = acks[k]!.at + 1;
    expect((await restoreAt(moment)).values).toEqual(acks.slice(0, k + 1).map((a) => a.v));
    await node.close();
  });
});
