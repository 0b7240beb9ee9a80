/**
 * Groups across nodes, on loopback: two real `shoal` processes on one real PostgreSQL.
 * - Cross-node replication lag: from a write's acknowledgement by the primary's node A to the
 *   moment a read at B's location first returns it, against the write's own acknowledgement time.
 * - Failover: A is killed with SIGKILL under steady writes; the time until a write succeeds at B,
 *   by an administrator's call made at once and by the automatic failover. Of the writes A
 *   acknowledged: how many B lacked when it was promoted (the replication lag at the failure,
 *   also in frames, from B's sync metadata against A's frame log), how many are lost, and how many
 *   of the lost B had applied (must be 0: that would be the promotion dropping frames).
 */
import { client } from "../test/helpers/http.js";
import { type Cluster, EAST, rows, run, startCluster, WEST } from "../test/helpers/nodes.js";
import type { ShoalProcess } from "../test/helpers/process.js";
import { ADMIN_TOKEN } from "../test/helpers/shoal.js";
import {
  maxId,
  onlyDatabase,
  primaryEnd,
  type ReplicaPosition,
  replicaPosition,
  tally,
  watchReplica,
} from "./failover-watch.js";
import { type BenchOptions, fmt, table } from "./harness.js";

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Setup {
  cluster: Cluster;
  a: ShoalProcess;
  b: ShoalProcess;
  token: string;
  primary: string;
  atB: string;
}

async function setup(org: string, env: Record<string, string>): Promise<Setup> {
  const cluster = await startCluster();
  const [a, b] = await Promise.all([cluster.start("node-a", EAST, env), cluster.start("node-b", WEST, env)]);
  const user = await client(a.url, ADMIN_TOKEN).post("/v1/admin/users", {
    username: org,
    email: `${org}@x.io`,
  });
  const api = client(a.url, user.body.token);
  await api.post(`/v1/organizations/${org}/groups`, { name: "g", location: EAST });
  await api.post(`/v1/organizations/${org}/databases`, { name: "d", group: "g" });
  const added = await api.post(`/v1/organizations/${org}/groups/g/locations/${WEST}`);
  if (added.status !== 200) throw new Error(added.text);
  const token = (await api.post(`/v1/organizations/${org}/databases/d/auth/tokens`)).body.jwt as string;
  const primary = `${a.url}/db/${org}/d/`;
  await run(primary, token, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)");
  return { cluster, a, b, token, primary, atB: `${b.url}/db/${org}/d@${WEST}/` };
}

/** Waits until A counts B's location as its standby (its metrics say it joined). */
async function standbyJoined(s: Setup): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const m = await client(s.a.url, ADMIN_TOKEN).get("/metrics");
    if (/shoal_standby_events_total\{event="joined"\} [1-9]/.test(m.text)) return;
    await sleep(100);
  }
  throw new Error("B never became A's standby");
}

/** Writes `n` rows at A; after each one's answer, polls B until it has it. */
async function lag(s: Setup, n: number, from = 1) {
  const ack: number[] = [];
  const seen: number[] = [];
  for (let i = from; i < from + n; i++) {
    const started = performance.now();
    await run(s.primary, s.token, `INSERT INTO t (id, v) VALUES (${i}, ${i})`);
    const acked = performance.now();
    ack.push(acked - started);
    // Until B has the table itself (the first writes), a read there fails: that is lag too.
    for (;;) {
      const found = await rows(s.atB, s.token, `SELECT count(*) FROM t WHERE id = ${i}`).catch(() => [[0]]);
      if (found[0]?.[0] === 1) break;
    }
    seen.push(performance.now() - acked);
  }
  return { ack, seen };
}

/** Steady writes at A until it dies; returns the ids A acknowledged. */
function writeUntilDead(s: Setup, from: number): { acked: number[]; done: Promise<void> } {
  const acked: number[] = [];
  const done = (async () => {
    for (let i = from; ; i++) {
      try {
        await run(s.primary, s.token, `INSERT INTO t (id, v) VALUES (${i}, ${i})`);
        acked.push(i);
      } catch {
        return;
      }
      await sleep(2);
    }
  })();
  return { acked, done };
}

/**
 * Kills A under load, fails over (by call, or by waiting), returns timings and the writes A
 * acknowledged sorted by what B had of them (see failover-watch.ts), with both sides' positions.
 */
async function failover(s: Setup, manual: boolean) {
  const dirOf = (id: string) => s.cluster.dirs.get(id)!;
  const replicaFile = onlyDatabase(dirOf("node-b"), WEST);
  const load = writeUntilDead(s, 100_000);
  const watch = watchReplica(s.atB, s.token);
  await sleep(500);
  const killedAt = performance.now();
  s.a.proc.kill("SIGKILL");
  const replicaAtKill = replicaPosition(replicaFile);
  await Promise.all([load.done, s.a.exited]);
  await watch.stop();
  const seenAtKill = watch.seenBefore(killedAt);
  // A is gone: B can't get anything more. What it shows now is what the promotion starts from.
  const seenAtPromotion = await maxId(s.atB, s.token);
  const replicaAtPromotion = replicaPosition(replicaFile);
  const primaryAtKill = primaryEnd(onlyDatabase(dirOf("node-a"), EAST));
  let calledMs = 0;
  if (manual) {
    const r = await client(s.b.url, ADMIN_TOKEN).post(`/v1/admin/groups/${org(s)}/g/failover`, {
      location: WEST,
    });
    if (r.status !== 200) throw new Error(r.text);
    calledMs = performance.now() - killedAt;
  }
  const newPrimary = `${s.b.url}/db/${org(s)}/d/`;
  for (;;) {
    try {
      await run(newPrimary, s.token, "INSERT INTO t (id, v) VALUES (NULL, 0)");
      break;
    } catch {
      await sleep(20);
    }
  }
  const writableMs = performance.now() - killedAt;
  const have = new Set(
    // `v = id`: the probe write above takes the next free id, which may be one A had acknowledged.
    (await rows(newPrimary, s.token, "SELECT id FROM t WHERE id >= 100000 AND v = id")).map(
      (r) => r[0] as number,
    ),
  );
  const counts = tally(load.acked, seenAtKill, seenAtPromotion, have);
  const frames = { primaryAtKill, replicaAtKill, replicaAtPromotion };
  const lastAcked = load.acked.at(-1);
  const detail = { lastAcked, seenAtKill, seenAtPromotion, ...counts, ...frames };
  console.log(`${manual ? "manual" : "automatic"} failover: ${JSON.stringify(detail)}`);
  return { calledMs, writableMs, ...counts, frames };
}

/** A failover's figures under `prefix`. */
function figures(prefix: string, r: Awaited<ReturnType<typeof failover>>): Record<string, number> {
  return {
    [`${prefix}_writable_ms`]: r.writableMs,
    [`${prefix}_acked`]: r.acked,
    [`${prefix}_unread_at_b_before_kill`]: r.unreadAtKill,
    [`${prefix}_in_lag_at_promotion`]: r.inLagAtPromotion,
    [`${prefix}_lost`]: r.lost,
    [`${prefix}_lost_applied`]: r.lostApplied,
    [`${prefix}_frames_lacked_at_kill`]: framesBehind(r.frames.primaryAtKill, r.frames.replicaAtKill),
    [`${prefix}_frames_lacked_at_promotion`]: framesBehind(
      r.frames.primaryAtKill,
      r.frames.replicaAtPromotion,
    ),
  };
}

/** Frames the replica lacked of the primary's history; -1 where they can't be compared. */
function framesBehind(primary: ReplicaPosition, replica: ReplicaPosition | undefined): number {
  return replica?.generation === primary.generation ? primary.frame - replica.frame : -1;
}

const org = (s: Setup) => new URL(s.primary).pathname.split("/")[2]!;

export async function nodesBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  const leaseMs = 2000;
  const env = { SHOAL_PRIMARY_LEASE_MS: String(leaseMs) };
  const n = opts.quick ? 100 : 500;
  // The baseline, in the same run: writes answered without waiting for B (asynchronous).
  const plain = await setup("benchasync", { ...env, SHOAL_STANDBY_CONFIRM_MS: "0" });
  let asyncAck: number[];
  try {
    await lag(plain, 20, 1);
    asyncAck = (await lag(plain, n, 1000)).ack;
  } finally {
    await plain.cluster.close();
  }
  const s = await setup("benchlag", env);
  let out: Record<string, unknown>;
  try {
    await lag(s, 20, 1);
    await standbyJoined(s);
    const { ack, seen } = await lag(s, n, 1000);
    const manual = await failover(s, true);
    out = {
      nodes_write_ack_p50_ms: percentile(ack, 0.5),
      nodes_write_ack_p99_ms: percentile(ack, 0.99),
      nodes_async_write_ack_p50_ms: percentile(asyncAck, 0.5),
      nodes_async_write_ack_p99_ms: percentile(asyncAck, 0.99),
      nodes_lag_p50_ms: percentile(seen, 0.5),
      nodes_lag_p99_ms: percentile(seen, 0.99),
      nodes_failover_call_ms: manual.calledMs,
      ...figures("nodes_failover", manual),
    };
  } finally {
    await s.cluster.close();
  }
  const auto = await setup("benchauto", { ...env, SHOAL_FAILOVER_AFTER_MS: "1000" });
  try {
    const r = await failover(auto, false);
    Object.assign(out, figures("nodes_auto_failover", r));
  } finally {
    await auto.cluster.close();
  }
  const f = out as Record<string, number>;
  console.log(`\nGroups across nodes (loopback, two processes, one PostgreSQL; lease ${leaseMs} ms)`);
  console.log(
    table(
      ["figure", "p50", "p99"],
      [
        [
          "write acknowledged by A, B its standby",
          `${fmt(f.nodes_write_ack_p50_ms!, 2)} ms`,
          `${fmt(f.nodes_write_ack_p99_ms!, 2)} ms`,
        ],
        [
          "write acknowledged by A, asynchronous (SHOAL_STANDBY_CONFIRM_MS=0)",
          `${fmt(f.nodes_async_write_ack_p50_ms!, 2)} ms`,
          `${fmt(f.nodes_async_write_ack_p99_ms!, 2)} ms`,
        ],
        [
          "standby / asynchronous",
          fmt(f.nodes_write_ack_p50_ms! / f.nodes_async_write_ack_p50_ms!, 2),
          fmt(f.nodes_write_ack_p99_ms! / f.nodes_async_write_ack_p99_ms!, 2),
        ],
        ["replication lag A -> B", `${fmt(f.nodes_lag_p50_ms!, 2)} ms`, `${fmt(f.nodes_lag_p99_ms!, 2)} ms`],
        [
          "lag / write ack",
          fmt(f.nodes_lag_p50_ms! / f.nodes_write_ack_p50_ms!, 2),
          fmt(f.nodes_lag_p99_ms! / f.nodes_write_ack_p99_ms!, 2),
        ],
      ],
    ),
  );
  const row = (name: string, p: string, call: string) => [
    name,
    call,
    `${fmt(f[`${p}_writable_ms`]!)} ms`,
    String(f[`${p}_acked`]),
    ...["at_kill", "at_promotion"].map((k) => {
      const n = f[`${p}_frames_lacked_${k}`]!;
      return n < 0 ? "n/a" : String(n);
    }),
    String(f[`${p}_in_lag_at_promotion`]),
    String(f[`${p}_lost`]),
    String(f[`${p}_lost_applied`]),
  ];
  console.log(
    table(
      [
        "failover after SIGKILL of A",
        "call answered",
        "first write at B",
        "acked by A",
        "frames B lacked: at kill",
        "at promotion",
        "acked writes B lacked",
        "lost",
        "lost though B had it",
      ],
      [
        row("administrator's call at once", "nodes_failover", `${fmt(f.nodes_failover_call_ms!)} ms`),
        row("automatic (SHOAL_FAILOVER_AFTER_MS=1000)", "nodes_auto_failover", "-"),
      ],
    ),
  );
  return out;
}
