import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PrimaryLeases } from "../../src/hosting/primary-leases.js";
import { type StandbyEvent, SyncStandbys } from "../../src/hosting/standbys.js";
import { createLogger } from "../../src/lib/logger.js";
import { ReplicaProgress } from "../../src/replication/progress.js";
import { openSqliteStore } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/store.js";
import { seedGroup } from "../helpers/store-seed.js";

/**
 * Synchronous standbys on a real store, with the replica progress a primary keeps: writes are
 * answered once the standby has them, a standby that doesn't confirm is dropped in the store
 * before writes stop waiting for it, and with the store out of reach too the write is
 * "unconfirmed" and the group isolated until the drop is recorded. Only listed standbys are
 * promoted by an automatic failover.
 */
const LEASE_MS = 2000;
const CONFIRM_MS = 150;
let dir: string;
let store: Store;
/** While set, the store's writes fail as if it were out of reach. */
let storeDown: boolean;
let progress: ReplicaProgress;
/** The primary's commit index of d1, as the test moves it. */
let primaryIndex: number;
let events: StandbyEvent[];

/** The real store, whose writes fail while `storeDown` (reads keep working: the test reads through it). */
const flaky = () =>
  ({
    read: (fn: Parameters<Store["read"]>[0]) => store.read(fn),
    write: (fn: Parameters<Store["write"]>[0]) =>
      storeDown ? Promise.reject(new Error("connect ECONNREFUSED")) : store.write(fn),
  }) as unknown as Store;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-standbys-"));
  store = await openSqliteStore(path.join(dir, "store"));
  storeDown = false;
  progress = new ReplicaProgress();
  primaryIndex = 0;
  events = [];
  await seedGroup(store, "east", ["east", "west"]);
});

afterEach(async () => {
  progress.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** Node A: holds east (the primary), west is on another node; its leases and standbys. */
function nodeA(rejoinAfterMs = 0) {
  const leases: PrimaryLeases = new PrimaryLeases({
    store: flaky(),
    log: createLogger("silent"),
    nodeId: "node-a",
    locations: () => new Set(["east"]),
    leaseMs: LEASE_MS,
    failoverAfterMs: 0,
    lost: async () => undefined,
    failover: () => Promise.reject(new Error("unused")),
  });
  const standbys = new SyncStandbys({
    store: flaky(),
    log: createLogger("silent"),
    nodeId: "node-a",
    confirmMs: CONFIRM_MS,
    rejoinAfterMs,
    replicas: {
      waitFor: (dbId, location, index, timeoutMs) => progress.wait(dbId, location, index, timeoutMs),
      waitCaughtUp: (_dbIds, location, timeoutMs) => progress.wait("d1", location, primaryIndex, timeoutMs),
    },
    group: async () => ({ remote: ["west"], dbIds: ["d1"] }),
    epochOf: (g) => leases.epochOf(g),
    heldGroups: () => leases.heldGroups(),
    announce: () => leases.announce(),
    counted: (e) => events.push(e),
  });
  leases.useStandbys(standbys);
  return { leases, standbys };
}

const storedStandbys = async () =>
  JSON.parse((await store.read((r) => r.leases.find("g1")))?.standbys ?? "null") as string[] | null;

/** One round of A's standbys, and the joins it began. */
async function round(a: ReturnType<typeof nodeA>) {
  await a.standbys.tick();
  await a.standbys.joinsSettled();
}

/** A's lease taken, and west joined as a standby (it had caught up). */
async function withWestJoined(rejoinAfterMs = 0) {
  const a = nodeA(rejoinAfterMs);
  await a.leases.tick();
  expect(await storedStandbys()).toEqual([]);
  primaryIndex = 5;
  progress.observe("d1", "west", 5);
  await round(a);
  expect(await storedStandbys()).toEqual(["west"]);
  expect(a.leases.confirms("g1")).toBe(true);
  return a;
}

describe("synchronous standbys", () => {
  it("records a caught-up replica as a standby, and answers a write once the standby has it", async () => {
    const a = await withWestJoined();
    let answered = false;
    const write = a.leases.confirm("g1", "d1", 6).then((ok) => {
      answered = true;
      return ok;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false);
    progress.observe("d1", "west", 6);
    expect(await write).toBe(true);
    expect(events).toEqual(["joined"]);
  });

  it("waits for a replica catching up without recording it, and lets it go freely when it fails a write", async () => {
    const a = nodeA(60_000);
    await a.leases.tick();
    primaryIndex = 5;
    progress.observe("d1", "west", 3);
    await a.standbys.tick();
    // Joining: writes wait for it, the store doesn't list it.
    expect(a.leases.confirms("g1")).toBe(true);
    expect(await storedStandbys()).toEqual([]);
    // A write it doesn't confirm in time is answered all the same, and it stops joining.
    expect(await a.leases.confirm("g1", "d1", 6)).toBe(true);
    expect(a.leases.confirms("g1")).toBe(false);
    // Caught up afterwards, it still isn't recorded: the write it missed came after its join began.
    progress.observe("d1", "west", 6);
    await a.standbys.joinsSettled();
    expect(await storedStandbys()).toEqual([]);
    expect(events).toEqual([]);
  });

  it("drops a standby that doesn't confirm, in the store first, and the write is answered", async () => {
    const a = await withWestJoined();
    expect(await a.leases.confirm("g1", "d1", 7)).toBe(true);
    expect(await storedStandbys()).toEqual([]);
    expect(a.leases.confirms("g1")).toBe(false);
    expect(a.leases.isolated("g1")).toBe(false);
    expect(events).toEqual(["joined", "dropped"]);
    // Caught up again, it joins again.
    primaryIndex = 7;
    progress.observe("d1", "west", 7);
    await round(a);
    expect(await storedStandbys()).toEqual(["west"]);
  });

  it("doesn't bring a dropped standby back before SHOAL's hold-off, so a flapping one can't stall every round", async () => {
    const a = await withWestJoined(60_000);
    expect(await a.leases.confirm("g1", "d1", 7)).toBe(true);
    expect(await storedStandbys()).toEqual([]);
    primaryIndex = 7;
    progress.observe("d1", "west", 7);
    await round(a);
    expect(await storedStandbys()).toEqual([]);
    expect(a.leases.confirms("g1")).toBe(false);
  });

  it("with the store out of reach too: the write is unconfirmed, the group isolated until the drop is recorded", async () => {
    const a = await withWestJoined();
    storeDown = true;
    expect(await a.leases.confirm("g1", "d1", 7)).toBe(false);
    expect(a.leases.isolated("g1")).toBe(true);
    expect(a.leases.views()[0]).toMatchObject({ groupId: "g1", isolated: true, confirms: true });
    // Still listed: a failover may promote west, which lacks index 7.
    expect(await storedStandbys()).toEqual(["west"]);
    expect(await a.leases.confirm("g1", "d1", 8)).toBe(false);
    expect(events.filter((e) => e === "unconfirmed")).toHaveLength(2);
    await round(a);
    expect(a.leases.isolated("g1")).toBe(true);
    storeDown = false;
    await round(a);
    expect(await storedStandbys()).toEqual([]);
    expect(a.leases.isolated("g1")).toBe(false);
    expect(a.leases.confirms("g1")).toBe(false);
  });

  it("stays isolated when a failover moved the lease on: the drop can't be recorded at the old epoch", async () => {
    const a = await withWestJoined();
    await store.write(async (r) => {
      const old = await r.leases.find("g1");
      await r.leases.replace({
        ...old!,
        epoch: old!.epoch + 1,
        location: "west",
        node_id: "node-b",
        standbys: "[]",
      });
    });
    expect(await a.leases.confirm("g1", "d1", 9)).toBe(false);
    expect(a.leases.isolated("g1")).toBe(true);
    // The next lease round finds the lease gone: the group is let go, and with it the isolation.
    await a.leases.tick();
    expect(a.leases.isolated("g1")).toBe(false);
    expect(a.leases.mayWrite("g1")).toBe(false);
    // A commit made before that round, whose confirmation is asked only now: its fate is unknown.
    expect(await a.leases.confirm("g1", "d1", 10)).toBe(false);
  });
});

describe("automatic failover", () => {
  /** Node B (holds west), failing over after the lease ran out; the failovers it started. */
  async function failoversOfB(standbys: string | null) {
    await store.write((r) =>
      r.leases.insert({
        ...{ group_id: "g1", epoch: 1, location: "east", node_id: "node-a", promoted_from: null },
        ...{ valid_from: new Date(Date.now() - 60_000).toISOString(), standbys },
        expires_at: new Date(Date.now() - 30_000).toISOString(),
      }),
    );
    const asked: Array<{ location: string; standbyOnly: boolean }> = [];
    const b = new PrimaryLeases({
      store,
      log: createLogger("silent"),
      nodeId: "node-b",
      locations: () => new Set(["west"]),
      leaseMs: LEASE_MS,
      failoverAfterMs: 1000,
      lost: async () => undefined,
      failover: async (_g, location, _reason, opts) => {
        asked.push({ location, standbyOnly: opts.standbyOnly });
      },
    });
    await b.tick();
    return asked;
  }

  it("promotes a listed standby", async () => {
    expect(await failoversOfB('["west"]')).toEqual([{ location: "west", standbyOnly: true }]);
  });

  it("doesn't promote a location the old primary didn't list: it may lack acknowledged writes", async () => {
    expect(await failoversOfB("[]")).toEqual([]);
  });

  it("promotes any location of a primary that kept no list (SHOAL_STANDBY_CONFIRM_MS=0)", async () => {
    expect(await failoversOfB(null)).toEqual([{ location: "west", standbyOnly: true }]);
  });
});
