import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nextRows, startRows } from "../../src/engine/driver.js";

let dir: string;
let blocked: Worker | undefined;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-driver-"));
});
afterEach(async () => {
  await blocked?.terminate();
  blocked = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe("loading the driver's addon", () => {
  it("doesn't wait on a worker thread blocked in native code (a replica's sync inside the driver)", async () => {
    // The worker blocks in a native call (as a replica's sync does inside the driver) for 3 s,
    // then leaves a mark. Anything that waits for every thread to answer sees the mark.
    const mark = path.join(dir, "worker-answered");
    const ready = new Int32Array(new SharedArrayBuffer(4));
    blocked = new Worker(
      `const { workerData } = require("node:worker_threads");
       const { execFileSync } = require("node:child_process");
       Atomics.store(workerData.ready, 0, 1);
       execFileSync("sh", ["-c", "sleep 3; touch " + JSON.stringify(workerData.mark)]);`,
      { eval: true, workerData: { ready, mark } },
    );
    while (Atomics.load(ready, 0) !== 1) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 200)); // into the native call
    const db = new Database(":memory:");
    try {
      const rows = startRows(db.prepare("SELECT 42 AS answer").raw(true), []);
      expect(existsSync(mark), "the first statement waited for the blocked worker").toBe(false);
      expect(nextRows(rows, 10)).toEqual([[42]]);
    } finally {
      db.close();
    }
  });
});
