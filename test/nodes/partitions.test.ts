/**
 * Faults of the network between live nodes, and between a node and PostgreSQL, while clients
 * write and read through both nodes: TCP proxies the test controls sit on every link
 * (helpers/tcp-proxy.ts), clients record what they were answered (helpers/history.ts), and after
 * the link heals the history is checked: no acknowledged write lost, no write answered "not
 * written" present, no client reading older data than it already saw, every location caught up.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHistory, runWorkload, tally, type WorkloadClient } from "../helpers/history.js";
import { client } from "../helpers/http.js";
import {
  type Cluster,
  EAST,
  printNodeWarningsOnFailure,
  rows,
  run,
  SETTLE_MS,
  startCluster,
  userWithDatabase,
  WEST,
  within,
} from "../helpers/nodes.js";
import type { ShoalProcess } from "../helpers/process.js";
import { TcpProxy } from "../helpers/tcp-proxy.js";

printNodeWarningsOnFailure();

/** Short leases keep the test quick: writes stop this long after the store is out of reach. */
const LEASE_MS = 2000;
let cluster: Cluster;
let a: ShoalProcess;
let b: ShoalProcess;
/** Each node's link to PostgreSQL, and the link other nodes reach each node through. */
const toStore = new Map<string, TcpProxy>();
const toNode = new Map<string, TcpProxy>();
let token: string;
const org = "parted";

async function startNode(id: string, location: string): Promise<ShoalProcess> {
  const pg = new URL(cluster.metadataUrl);
  const store = await TcpProxy.start(Number(pg.port));
  const inbound = await TcpProxy.start();
  pg.port = String(store.port);
  const p = await cluster.start(id, location, {
    SHOAL_METADATA_URL: pg.toString(),
    SHOAL_NODE_URL: `http://127.0.0.1:${inbound.port}`,
    SHOAL_PRIMARY_LEASE_MS: String(LEASE_MS),
  });
  inbound.target(Number(new URL(p.url).port));
  toStore.set(id, store);
  toNode.set(id, inbound);
  return p;
}

/** A client through each node (named for the run, as each test writes its own rows). */
const clients = (run: string): WorkloadClient[] => [
  { name: `${run}-via-a`, url: `${a.url}/db/${org}/d1/`, token },
  { name: `${run}-via-b`, url: `${b.url}/db/${org}/d1@${WEST}/`, token },
];

/** Every row at `url`, by client. */
async function finalState(url: string): Promise<Map<string, Set<number>>> {
  const out = new Map<string, Set<number>>();
  for (const [c, n] of (await rows(url, token, "SELECT client, n FROM t")) as Array<[string, number]>) {
    if (!out.has(c)) out.set(c, new Set());
    out.get(c)!.add(n);
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  cluster = await startCluster();
  a = await startNode("node-a", EAST);
  b = await startNode("node-b", WEST);
  const made = await userWithDatabase(a, org);
  token = made.token;
  const added = await client(a.url, made.userToken).post(
    `/v1/organizations/${org}/groups/g/locations/${WEST}`,
  );
  expect(added.status, added.text).toBe(200);
  await run(
    `${a.url}/db/${org}/d1/`,
    token,
    "CREATE TABLE t (client TEXT, n INTEGER, PRIMARY KEY (client, n))",
  );
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await Promise.all([...toStore.values(), ...toNode.values()].map((p) => p.close()));
});

describe("PostgreSQL out of reach of the primary's node", () => {
  it.each([
    ["blackhole", "a partition (nothing answers)"],
    ["reset", "connections refused"],
  ] as const)(
    "%s, %s: stops writes once the lease lapses, keeps reads at both locations, loses nothing",
    async (mode, _what) => {
      const run = `store-${mode}`;
      const load = runWorkload(clients(run), { timeoutMs: 8000, pauseMs: 20 });
      await sleep(1500);
      const cutAt = Date.now();
      toStore.get("node-a")!.cut(mode);
      await sleep(3 * LEASE_MS);
      const healAt = Date.now();
      toStore.get("node-a")!.heal();
      await sleep(3 * LEASE_MS);
      const history = await load.stop();
      const final = await finalState(`${a.url}/db/${org}/d1/`);
      const during = history.filter((o) => o.start > cutAt + LEASE_MS + 500 && o.end < healAt);
      expect(checkHistory(history, final), JSON.stringify(tally(history))).toEqual([]);
      // Writes: refused with a code that says nothing was written, once the lease is gone.
      const writes = during.filter((o) => o.kind === "write");
      expect(writes.length, JSON.stringify(tally(history))).toBeGreaterThan(0);
      expect(
        writes.filter((o) => o.outcome === "ok"),
        JSON.stringify(tally(during)),
      ).toEqual([]);
      // Reads: answered at both locations throughout.
      for (const c of [`${run}-via-a`, `${run}-via-b`]) {
        const reads = during.filter((o) => o.kind === "read" && o.client === c);
        expect(reads.length, c).toBeGreaterThan(0);
        expect(
          reads.every((o) => o.outcome === "ok"),
          `${c}: ${JSON.stringify(tally(reads))}`,
        ).toBe(true);
      }
      // After the heal, writes are taken again at both within a lease.
      const after = history.filter((o) => o.kind === "write" && o.start > healAt + LEASE_MS);
      for (const c of [`${run}-via-a`, `${run}-via-b`]) {
        const mine = after.filter((o) => o.client === c);
        expect(
          mine.length > 0 && mine.every((o) => o.outcome === "ok"),
          `${c}: ${JSON.stringify(tally(mine))}`,
        ).toBe(true);
      }
      const refused = history.filter((o) => o.outcome === "refused");
      const firstRefused = Math.min(...refused.map((o) => o.end)) - cutAt;
      const back = history.filter((o) => o.kind === "write" && o.outcome === "ok" && o.end > healAt);
      const backAt = Math.min(...back.map((o) => o.end)) - healAt;
      const slowest = Math.max(...history.filter((o) => o.kind === "read").map((o) => o.end - o.start));
      const codes = [...new Set(refused.map((o) => o.why))].join(", ");
      console.log(
        `store out of reach (${mode}) for ${healAt - cutAt} ms (lease ${LEASE_MS} ms): ${refused.length} writes refused (${codes}), the first ${firstRefused} ms after the cut; writes accepted again ${backAt} ms after the heal; slowest read ${slowest} ms`,
      );
    },
    60_000,
  );
});

describe("a partition between the two nodes", () => {
  it("keeps the primary's node serving, serves reads at the replica's node, and catches up once healed", async () => {
    const load = runWorkload(clients("nodes"), { timeoutMs: 8000, pauseMs: 20 });
    await sleep(1500);
    const cutAt = Date.now();
    // B can't reach A: its forwarded writes and its replica's pulls go nowhere.
    toNode.get("node-a")!.cut("blackhole");
    await sleep(4000);
    const healAt = Date.now();
    toNode.get("node-a")!.heal();
    await sleep(3000);
    const history = await load.stop();
    const final = await finalState(`${a.url}/db/${org}/d1/`);
    expect(checkHistory(history, final), JSON.stringify(tally(history))).toEqual([]);
    const during = history.filter((o) => o.start > cutAt + 500 && o.end < healAt);
    const atA = during.filter((o) => o.client === "nodes-via-a");
    expect(atA.length).toBeGreaterThan(0);
    expect(
      atA.every((o) => o.outcome === "ok"),
      JSON.stringify(tally(atA)),
    ).toBe(true);
    const readsAtB = during.filter((o) => o.client === "nodes-via-b" && o.kind === "read");
    expect(
      readsAtB.every((o) => o.outcome === "ok"),
      JSON.stringify(tally(readsAtB)),
    ).toBe(true);
    // Every location converges: B's replica has every row A has.
    const converged = await within(SETTLE_MS, async () => {
      const atB = await finalState(`${b.url}/db/${org}/d1@${WEST}/`);
      const latest = await finalState(`${a.url}/db/${org}/d1/`);
      for (const [c, ns] of latest) expect(atB.get(c)?.size ?? 0, c).toBe(ns.size);
    });
    console.log(
      `partition between nodes: ${JSON.stringify(tally(during))}; B caught up ${converged} ms after the load stopped`,
    );
  }, 60_000);
});
