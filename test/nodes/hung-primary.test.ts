/**
 * A primary whose machine hangs instead of refusing connections (its process stopped with
 * SIGSTOP: connections are accepted by the kernel, nothing ever answers). The replica at B pulls
 * from it through B's own relay, whose limits cut the pull: reads at B keep answering, the
 * administrator's failover to B finishes, and A, once it runs again, follows B without diverging.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, client } from "../helpers/http.js";
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
import { ADMIN_TOKEN } from "../helpers/shoal.js";

printNodeWarningsOnFailure();

/** Short leases keep the test quick: the failover waits for the old lease to run out. */
const LEASE = { SHOAL_PRIMARY_LEASE_MS: "2000" };
/** Far above what a read or a failover takes with limits, far below a pull that never ends. */
const READ_BOUND_MS = 15_000;
const FAILOVER_BOUND_MS = 30_000;
let cluster: Cluster;
let a: ShoalProcess;
let b: ShoalProcess;
let userToken: string;
let token: string;
const org = "hung";
const api = (p: ShoalProcess): Client => client(p.url, userToken);
const primaryAt = (p: ShoalProcess) => `${p.url}/db/${org}/d1/`;
const atB = () => `${b.url}/db/${org}/d1@${WEST}/`;
const atA = () => `${a.url}/db/${org}/d1@${EAST}/`;

/** `work`, or a rejection once `ms` have passed (a hang fails the test instead of timing it out). */
async function bounded<T>(ms: number, what: string, work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return { value: await Promise.race([work, late]), ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** Nodes A (the primary, EAST) and B (its replica, WEST) with one database of five rows. */
async function setUp(bSettings: Record<string, string> = {}): Promise<void> {
  cluster = await startCluster();
  [a, b] = await Promise.all([
    cluster.start("node-a", EAST, LEASE),
    cluster.start("node-b", WEST, { ...LEASE, ...bSettings }),
  ]);
  ({ userToken, token } = await userWithDatabase(a, org));
  expect((await api(a).post(`/v1/organizations/${org}/groups/g/locations/${WEST}`)).status).toBe(200);
  await run(primaryAt(a), token, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  for (let i = 0; i < 5; i++) await run(primaryAt(a), token, `INSERT INTO t (v) VALUES ('a${i}')`);
  await within(SETTLE_MS, async () => {
    expect(await rows(atB(), token, "SELECT count(*) FROM t")).toEqual([[5]]);
  });
}

async function tearDown(): Promise<void> {
  // Nothing may stay stopped: a stopped process ignores the SIGKILL's exit until it runs again.
  a?.proc.kill("SIGCONT");
  await cluster?.close();
}

describe("a primary whose machine hangs", () => {
  beforeAll(() => setUp(), 120_000);
  afterAll(tearDown);

  it("doesn't stall reads at B's location", async () => {
    a.proc.kill("SIGSTOP");
    // Long enough for several of B's pulls (one a second) to meet the hung primary.
    const times: number[] = [];
    const until = Date.now() + 12_000;
    while (Date.now() < until) {
      const read = await bounded(READ_BOUND_MS, "a read at B", rows(atB(), token, "SELECT count(*) FROM t"));
      expect(read.value).toEqual([[5]]);
      times.push(read.ms);
      await new Promise((r) => setTimeout(r, 200));
    }
    const sorted = [...times].sort((x, y) => x - y);
    console.log(
      `reads at B while A is stopped: ${times.length}, median ${sorted[sorted.length >> 1]} ms, slowest three ${sorted.slice(-3).join(", ")} ms`,
    );
  }, 60_000);

  it("fails over to B on the administrator's call, and writes succeed there", async () => {
    const moved = await bounded(
      FAILOVER_BOUND_MS,
      "the failover",
      client(b.url, ADMIN_TOKEN).post(`/v1/admin/groups/${org}/g/failover`, { location: WEST }),
    );
    console.log(`failover to B while A is stopped: ${moved.ms} ms`);
    expect(moved.value.status, moved.value.text).toBe(200);
    expect(moved.value.body).toMatchObject({ group: "g", primary: WEST, epoch: 2, databases: 1 });
    await run(primaryAt(b), token, "INSERT INTO t (v) VALUES ('on B')");
    expect(await rows(primaryAt(b), token, "SELECT count(*) FROM t")).toEqual([[6]]);
  }, 60_000);

  it("brings A back, once it runs again, as a replica of B holding B's rows", async () => {
    a.proc.kill("SIGCONT");
    await run(primaryAt(b), token, "INSERT INTO t (v) VALUES ('after A woke')");
    const whole = await rows(primaryAt(b), token, "SELECT id, v FROM t ORDER BY id");
    expect(whole).toHaveLength(7);
    await within(20_000, async () => {
      expect(await rows(atA(), token, "SELECT id, v FROM t ORDER BY id")).toEqual(whole);
    });
    // A's file is a replica's now: a write sent to A's location lands on B, and A reads it.
    await run(atA(), token, "INSERT INTO t (v) VALUES ('via A')");
    expect(await rows(primaryAt(b), token, "SELECT count(*) FROM t")).toEqual([[8]]);
  }, 60_000);
});

describe("a failover while a pull from the hung primary is in flight", () => {
  // A pull limit no test waits for: only cutting the pull can let the promotion through.
  beforeAll(() => setUp({ SHOAL_REPLICA_PULL_TIMEOUT_MS: "600000" }), 120_000);
  afterAll(tearDown);

  it("doesn't wait for the pull: the promotion cuts it", async () => {
    a.proc.kill("SIGSTOP");
    // B's replica pulls every second: one is now stuck on A, whose lease has up to 2 s to run.
    await new Promise((r) => setTimeout(r, 1500));
    const moved = await bounded(
      FAILOVER_BOUND_MS,
      "the failover",
      client(b.url, ADMIN_TOKEN).post(`/v1/admin/groups/${org}/g/failover`, { location: WEST }),
    );
    console.log(`failover to B with a pull stuck on the stopped A: ${moved.ms} ms`);
    expect(moved.value.status, moved.value.text).toBe(200);
    await run(primaryAt(b), token, "INSERT INTO t (v) VALUES ('on B')");
    expect(await rows(primaryAt(b), token, "SELECT count(*) FROM t")).toEqual([[6]]);
  }, 60_000);
});
