/**
 * Faults of the network between live nodes, and between a node and PostgreSQL, while clients
 * write and read through both nodes: TCP proxies the test controls sit on every link
 * (helpers/faulty-cluster.ts), clients record what they were answered (helpers/history.ts), and
 * after the link heals the history is checked: no acknowledged write lost, no write answered "not
 * written" present, no client reading older data than it already saw, every location caught up.
 * `npm run bench -- --only partitions` runs the same at a larger size.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultyCluster, partitionFigures, startFaultyCluster } from "../helpers/faulty-cluster.js";
import { checkHistory, runWorkload, tally } from "../helpers/history.js";
import { client } from "../helpers/http.js";
import { EAST, printNodeWarningsOnFailure, SETTLE_MS, WEST, within } from "../helpers/nodes.js";
import { ADMIN_TOKEN } from "../helpers/shoal.js";

printNodeWarningsOnFailure();

/** Short leases keep the test quick: writes stop this long after the store is out of reach. */
const LEASE_MS = 2000;
/**
 * The replica's node takes the primary over this long after its lease ran out: longer than the
 * store outages above last, so only the isolation at the end leads to a failover.
 */
const FAILOVER_AFTER_MS = 8000;
let c: FaultyCluster;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  c = await startFaultyCluster(LEASE_MS, {
    SHOAL_FAILOVER_AFTER_MS: String(FAILOVER_AFTER_MS),
    // A write sent on from B's location waits this long for B's replica before it is answered.
    SHOAL_TRANSACTION_TIMEOUT_MS: "1500",
    // B's pulls from a silent A end after this; then B waits for a probe before pulling again.
    SHOAL_REPLICA_PULL_TIMEOUT_MS: "1000",
  });
}, 120_000);

afterAll(async () => {
  await c?.close();
});

describe("PostgreSQL out of reach of the primary's node", () => {
  it.each([
    ["blackhole", "a partition (nothing answers)"],
    ["reset", "connections refused"],
  ] as const)(
    "%s, %s: stops writes once the lease lapses, keeps reads at both locations, loses nothing",
    async (mode, _what) => {
      const run = `store-${mode}`;
      const load = runWorkload(c.clients(run), { timeoutMs: 8000, pauseMs: 20 });
      await sleep(1500);
      const cutAt = Date.now();
      c.toStore.get("node-a")!.cut(mode);
      await sleep(3 * LEASE_MS);
      const healAt = Date.now();
      c.toStore.get("node-a")!.heal();
      await sleep(3 * LEASE_MS);
      const history = await load.stop();
      expect(checkHistory(history, await c.finalState()), JSON.stringify(tally(history))).toEqual([]);
      const during = history.filter((o) => o.start > cutAt + LEASE_MS + 500 && o.end < healAt);
      // Writes: refused with a code that says nothing was written, once the lease is gone.
      const writes = during.filter((o) => o.kind === "write");
      expect(writes.length, JSON.stringify(tally(history))).toBeGreaterThan(0);
      expect(
        writes.filter((o) => o.outcome === "ok"),
        JSON.stringify(tally(during)),
      ).toEqual([]);
      // Reads: answered at both locations throughout.
      for (const via of ["via-a", "via-b"]) {
        const reads = during.filter((o) => o.kind === "read" && o.client.startsWith(`${run}-${via}`));
        expect(reads.length, via).toBeGreaterThan(0);
        expect(
          reads.every((o) => o.outcome === "ok"),
          `${via}: ${JSON.stringify(tally(reads))}`,
        ).toBe(true);
      }
      // After the heal, writes are taken again at both within a lease.
      const after = history.filter((o) => o.kind === "write" && o.start > healAt + LEASE_MS);
      for (const via of ["via-a", "via-b"]) {
        const mine = after.filter((o) => o.client.startsWith(`${run}-${via}`));
        expect(
          mine.length > 0 && mine.every((o) => o.outcome === "ok"),
          `${via}: ${JSON.stringify(tally(mine))}`,
        ).toBe(true);
      }
      console.log(
        `store out of reach (${mode}): ${JSON.stringify(partitionFigures(history, cutAt, healAt))}`,
      );
    },
    60_000,
  );
});

describe("a partition between the two nodes", () => {
  it("keeps the primary's node serving, serves reads at the replica's node, and catches up once healed", async () => {
    const load = runWorkload(c.clients("nodes"), { timeoutMs: 8000, pauseMs: 20 });
    await sleep(1500);
    const cutAt = Date.now();
    // B can't reach A: its forwarded writes and its replica's pulls go nowhere.
    c.toNode.get("node-a")!.cut("blackhole");
    await sleep(4000);
    const healAt = Date.now();
    c.toNode.get("node-a")!.heal();
    await sleep(3000);
    const history = await load.stop();
    expect(checkHistory(history, await c.finalState()), JSON.stringify(tally(history))).toEqual([]);
    const during = history.filter((o) => o.start > cutAt + 500 && o.end < healAt);
    const atA = during.filter((o) => o.client.startsWith("nodes-via-a"));
    expect(atA.length).toBeGreaterThan(0);
    expect(
      atA.every((o) => o.outcome === "ok"),
      JSON.stringify(tally(atA)),
    ).toBe(true);
    const readsAtB = during.filter((o) => o.client.startsWith("nodes-via-b") && o.kind === "read");
    expect(
      readsAtB.every((o) => o.outcome === "ok"),
      JSON.stringify(tally(readsAtB)),
    ).toBe(true);
    // Every location converges: B's replica has every row A has.
    const converged = await within(SETTLE_MS, async () => {
      const atB = await c.replicaState();
      for (const [name, ns] of await c.finalState()) expect(atB.get(name)?.size ?? 0, name).toBe(ns.size);
    });
    console.log(
      `partition between nodes: ${JSON.stringify(tally(during))}; B caught up ${converged} ms after the load stopped`,
    );
  }, 60_000);
});

describe("the primary's answers to the replica's node lost, one way", () => {
  it("never lets a client at B read older than what it wrote there, though B's replica lags after the heal", async () => {
    const load = runWorkload(c.clients("one-way", 4), { timeoutMs: 8000, pauseMs: 20 });
    await sleep(1500);
    // B's requests reach A, A's answers are held: B's forwarded writes are answered (once the link
    // heals) before B's replica, whose pulls ended and wait for a probe, has them.
    const link = c.toNode.get("node-a")!;
    link.cut("one-way", "from-target");
    await sleep(4000);
    link.heal();
    await sleep(4000);
    const history = await load.stop();
    expect(checkHistory(history, await c.finalState()), JSON.stringify(tally(history))).toEqual([]);
    const atB = history.filter((o) => o.client.startsWith("one-way-via-b") && o.kind === "write");
    expect(atB.filter((o) => o.outcome === "ok").length).toBeGreaterThan(0);
    console.log(`one-way cut: ${JSON.stringify(tally(history))}`);
  }, 60_000);
});

// Last: the failover leaves the primary on the other node.
describe("the primary's node cut off from everything, and a failover", () => {
  it("loses no acknowledged write: writes wait for the standby, and the isolated node serves nothing it may lose", async () => {
    expect(await c.primaryLocation()).toBe(EAST);
    // B is A's standby (it caught up again after the partition between them).
    await within(SETTLE_MS, async () => {
      const status = await client(c.a.url, ADMIN_TOKEN).get("/v1/admin/node");
      expect(status.body.primaries).toEqual([
        { group_id: expect.any(String), standbys: [WEST], joining: [], isolated: false },
      ]);
    });
    const load = runWorkload(c.clients("isolated"), { timeoutMs: 8000, pauseMs: 20 });
    await sleep(1500);
    const cutAt = Date.now();
    const heal = c.isolate("node-a");
    // The lease runs out, B waits FAILOVER_AFTER_MS more and promotes its standby.
    const promoted = await within(LEASE_MS + FAILOVER_AFTER_MS + 10_000, async () => {
      expect(await c.primaryLocation()).not.toBe(EAST);
    });
    await sleep(2000);
    const healAt = Date.now();
    heal();
    await sleep(3 * LEASE_MS);
    const history = await load.stop();
    const figures = partitionFigures(history, cutAt, healAt);
    // The old primary's writes past the cut were answered "unconfirmed" or refused, never
    // acknowledged: none is lost, and no client read what the failover discarded.
    expect(checkHistory(history, await c.finalState()), JSON.stringify(tally(history))).toEqual([]);
    const atA = history.filter((o) => o.client.startsWith("isolated-via-a") && o.start > cutAt + 500);
    const duringAtA = atA.filter((o) => o.end < healAt);
    expect(duringAtA.length).toBeGreaterThan(0);
    expect(
      duringAtA.filter((o) => o.outcome === "ok" && o.kind === "write"),
      JSON.stringify(tally(duringAtA)),
    ).toEqual([]);
    // The promoted node takes writes from both, once A rejoins as its replica.
    const after = history.filter((o) => o.kind === "write" && o.start > healAt + 2 * LEASE_MS);
    for (const via of ["via-a", "via-b"]) {
      const mine = after.filter((o) => o.client.startsWith(`isolated-${via}`));
      expect(
        mine.length > 0 && mine.every((o) => o.outcome === "ok"),
        `${via}: ${JSON.stringify(tally(mine))}`,
      ).toBe(true);
    }
    console.log(
      `primary isolated, failover ${promoted} ms after the cut: ${JSON.stringify(figures)}; ${JSON.stringify(tally(history))}`,
    );
  }, 90_000);
});
