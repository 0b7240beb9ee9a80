import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replicaPosition, writeReplicaPosition } from "../../src/engine/replica-info.js";
import { Failover, type FailoverParts } from "../../src/hosting/failover.js";
import { createLogger } from "../../src/lib/logger.js";
import { openSqliteStore } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/store.js";
import { seedGroup } from "../helpers/store-seed.js";

/**
 * A failover turning this node's replica into the primary, on a real store and real files: the
 * files are a primary's before the store says so (this node's data plane may open them from that
 * moment), and a lease that can't be written leaves the replica as it was, following again.
 */
let dir: string;
let store: Store;
let file: string;
let calls: string[];
let failover: Failover;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-failover-files-"));
  store = await openSqliteStore(path.join(dir, "store"));
  await seedGroup(store, "east", ["east", "west"]);
  // The replica in `west`: rows, and libSQL's note of where it stands in the primary's history.
  mkdirSync(path.join(dir, "west"));
  file = path.join(dir, "west", "d1.db");
  const db = new Database(file);
  db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a'), ('b');");
  db.close();
  writeReplicaPosition(file, { generation: 3, frame: 7 });
  calls = [];
  const record =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push(`${name} ${args.join(" ")}`);
    };
  const parts: FailoverParts = {
    store,
    files: { path: (location, dbId) => path.join(dir, location, `${dbId}.db`) },
    runtimes: {
      position: () => Promise.reject(new Error("unused")),
      remove: () => Promise.reject(new Error("unused")),
    },
    replicas: {
      release: record("release"),
      ensure: record("ensure"),
      adopt: record("adopt"),
      rebuild: (...args) => void record("rebuild")(...args),
      forgetProgress: () => {},
    },
    directory: { invalidate: () => calls.push("invalidate") },
    log: createLogger("silent"),
    nodeId: "node-west",
    holds: (l) => l === "west",
    leaseMs: 2000,
    leases: () => ({
      adopt: (g: string, epoch: number) => {
        calls.push(`lease ${g} ${epoch}`);
      },
      freshStandbys: () => "[]",
    }),
  };
  failover = new Failover(parts);
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const rows = () => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT v FROM t ORDER BY v").all();
  } finally {
    db.close();
  }
};
const primaryOf = () => store.read(async (r) => (await r.groups.findById("g1"))?.primary_location);

describe("a failover to this node's replica", () => {
  it("makes the files a primary's before the store names the location the primary", async () => {
    const write = store.write.bind(store);
    const seen: Array<{ info: boolean; log: boolean }> = [];
    store.write = ((fn) => {
      seen.push({ info: existsSync(`${file}-info`), log: existsSync(`${file}.log/meta.json`) });
      return write(fn);
    }) as Store["write"];
    const done = await failover.promote("g1", "west", "a test");
    expect(done).toMatchObject({ epoch: 1, databases: 1 });
    expect(seen).toEqual([{ info: false, log: true }]);
    expect(await primaryOf()).toBe("west");
    // The new primary's history starts at the generation after the one the replica followed.
    expect(JSON.parse(readFileSync(`${file}.log/meta.json`, "utf8")).generation).toBe(4);
    const lease = await store.read((r) => r.leases.find("g1"));
    expect(JSON.parse(lease!.promoted_from!)).toEqual({ d1: { generation: 3, frame: 7 } });
    expect(rows()).toEqual([{ v: "a" }, { v: "b" }]);
    expect(calls).toEqual(["release d1 west", "lease g1 1", "invalidate"]);
  });

  it("leaves the replica as it was, following from where it stood, when the lease can't be written", async () => {
    store.write = (() => Promise.reject(new Error("the store can't be reached"))) as Store["write"];
    await expect(failover.promote("g1", "west", "a test")).rejects.toThrow("the store can't be reached");
    expect(await primaryOf()).toBe("east");
    expect(existsSync(`${file}.log`)).toBe(false);
    expect(replicaPosition(file)).toEqual({ generation: 3, frame: 7 });
    expect(rows()).toEqual([{ v: "a" }, { v: "b" }]);
    // Followed again from its own file: nothing deleted, nothing copied again.
    expect(calls).toEqual(["release d1 west", "adopt d1 west"]);
  });

  it("promotes a group once when two failovers to the same location meet", async () => {
    const results = await Promise.allSettled([
      failover.promote("g1", "west", "an administrator asked for it"),
      failover.promote("g1", "west", "the primary's lease ran out"),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect((results[1] as PromiseRejectedResult).reason.message).toMatch(
      /already the primary of group default/,
    );
    expect(calls.filter((c) => c.startsWith("release"))).toEqual(["release d1 west"]);
  });
});
