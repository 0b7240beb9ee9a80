import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restoreDatabase } from "../../src/backup/restore.js";
import { createLogger } from "../../src/lib/logger.js";
import { sleep, tempDir, testShipper, waitFor } from "../helpers/backup.js";
import { TestPrimaries } from "../helpers/backup-primaries.js";
import { startTestS3, type TestS3 } from "../helpers/s3-server.js";

let s3: TestS3;
let dir: string;

beforeAll(async () => {
  s3 = await startTestS3();
  dir = await tempDir("outage");
});
afterAll(async () => {
  await s3.close();
  await rm(dir, { recursive: true, force: true });
});

describe("an unreachable bucket", () => {
  it("is retried with growing waits and a growing reported delay, while commits go on", async () => {
    const lines: string[] = [];
    const log = createLogger(
      "info",
      new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const bucket = s3.client("outage", { requestTimeoutMs: 2000 });
    const node = new TestPrimaries(path.join(dir, "node-a"));
    const id = randomUUID();
    node.create(id);
    node.write(id, "CREATE TABLE t (v TEXT)");
    node.write(id, "INSERT INTO t VALUES ('before the outage')");
    const shipper = testShipper(bucket, node, path.join(dir, "work"), {
      log,
      intervalMs: 50,
      maxBackoffMs: 400,
    });
    shipper.start();
    await waitFor("the first upload", () => shipper.status().databases[0]?.frame !== undefined);

    await s3.stop();
    const written = ["before the outage"];
    for (let i = 0; i < 30; i++) {
      // Each commit returns at once: the shipper holds nothing the commit path waits on.
      node.write(id, "INSERT INTO t VALUES (?)", [`during ${i}`]);
      written.push(`during ${i}`);
      await sleep(10);
    }
    await waitFor("a failed upload", () => (shipper.status().databases[0]?.failures ?? 0) >= 2);
    const first = shipper.status();
    await sleep(300);
    const later = shipper.status();
    expect(later.delayMs).toBeGreaterThan(first.delayMs);
    // Passes come every 50 ms, but a failing database waits longer each time (up to 400 ms here).
    expect(later.databases[0]!.failures - first.databases[0]!.failures).toBeLessThanOrEqual(3);
    expect(first.delayMs).toBeGreaterThan(0);
    expect(later.databases[0]!.lastError).toMatch(/couldn't .* in bucket shoal-backups/);

    await s3.start();
    await waitFor("shipping to resume", () => {
      const d = shipper.status().databases[0]!;
      return d.failures === 0 && d.delayMs === 0;
    });
    await shipper.stop();
    await node.close();

    const warnings = lines.filter((l) => l.includes("backup shipping failed; retrying"));
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    // One line for the first failure, then one in ten: an outage doesn't flood the log.
    expect(warnings.length).toBeLessThanOrEqual(1 + Math.floor(first.databases[0]!.failures / 10) + 5);
    expect(lines.some((l) => l.includes("backup shipping resumed"))).toBe(true);
    expect(lines.join("")).not.toContain("S3RVER");

    const fresh = new TestPrimaries(path.join(dir, "restored"));
    const dest = fresh.path(id);
    mkdirSync(path.dirname(dest), { recursive: true });
    expect(await restoreDatabase(bucket, id, dest)).toMatchObject({ kind: "restored" });
    fresh.adopt(id);
    expect(fresh.rows(id, "SELECT v FROM t ORDER BY rowid").map((r) => r[0])).toEqual(written);
    await fresh.close();
  });
});
