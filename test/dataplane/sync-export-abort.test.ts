/**
 * `GET .../export/{generation}` (a new embedded replica's first copy of the file) left by its
 * client half-way: the file the answer was read from is closed. Before, the response's close
 * unpiped the file and left it open, a descriptor per abandoned download.
 */
import { readdirSync, readlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipeline, setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { instanceFile } from "../helpers/files.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
let file: string;

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  // 40 commits of 1 MiB: past a generation (16 MiB of frames), so the current one starts from
  // a file holding most of them, far more than socket buffers take: a download is still running
  // when its client leaves.
  const ran = await pipeline(db.urls.httpPath, db.token, {
    requests: [
      { type: "execute", stmt: { sql: "CREATE TABLE t (b BLOB)" } },
      ...Array.from({ length: 40 }, () => ({
        type: "execute",
        stmt: { sql: "INSERT INTO t VALUES (randomblob(1048576))" },
      })),
    ],
  });
  expect(ran.body.results.every((r: { type: string }) => r.type === "ok")).toBe(true);
  expect(ran.status).toBe(200);
  file = instanceFile(h.dataDir, "aws-us-east-1", db.id);
});
afterAll(() => h.close());

/** Descriptors open on `path` in every process this user can see (the node's shards among them). */
function openOn(path: string): number {
  let n = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === path) n++;
      } catch {}
    }
  }
  return n;
}

async function generation(): Promise<number> {
  const r = await fetch(`${db.urls.httpPath}info`, { headers: { authorization: `Bearer ${db.token}` } });
  return ((await r.json()) as { current_generation: number }).current_generation;
}

describe("an export left half-way by its client", () => {
  it("closes the file it was read from", async () => {
    const g = await generation();
    const url = `${db.urls.httpPath}export/${g}`;
    const whole = await fetch(url, { headers: { authorization: `Bearer ${db.token}` } });
    expect((await whole.arrayBuffer()).byteLength).toBeGreaterThan(16 * 1024 * 1024);
    await new Promise((r) => setTimeout(r, 200));
    const before = openOn(file);
    let after = before;
    for (let i = 0; i < 5; i++) {
      const abort = new AbortController();
      const res = await fetch(url, {
        headers: { authorization: `Bearer ${db.token}` },
        signal: abort.signal,
      });
      const reader = res.body!.getReader();
      await reader.read();
      abort.abort();
      await reader.cancel().catch(() => {});
      // The server sees the connection close, then closes its file (one at a time, so no two
      // downloads overlap and the pool keeps no second connection).
      after = openOn(file);
      for (let tries = 0; tries < 30 && after > before; tries++) {
        await new Promise((r) => setTimeout(r, 100));
        after = openOn(file);
      }
    }
    expect(after).toBe(before);
  });
});
