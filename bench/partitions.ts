/**
 * The fault harness at a larger size than the suite's (test/nodes/partitions.test.ts): two nodes
 * on one PostgreSQL server with a proxy on every link, several clients through each node, and each
 * fault held longer, with the default lease. For each fault it prints what the clients saw (writes
 * acknowledged, refused, of unknown outcome), when writes stopped and came back, the slowest read,
 * how long the replica took to catch up, and what the history check found (nothing, or a bug).
 * The baseline, in the same run, is the same load with no fault.
 */
import { type FaultyCluster, partitionFigures, startFaultyCluster } from "../test/helpers/faulty-cluster.js";
import { checkHistory, runWorkload } from "../test/helpers/history.js";
import type { CutMode, Direction } from "../test/helpers/tcp-proxy.js";
import { type BenchOptions, fmt, table } from "./harness.js";

const LEASE_MS = 10_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Fault {
  label: string;
  link?: { on: "toStore" | "toNode"; node: string; mode: CutMode; direction?: Direction };
  /** Both links between the nodes pass data only after this long. */
  delayMs?: number;
  /** Cut every link of this node (store, and both ways between the nodes). */
  isolate?: string;
}

const FAULTS: Fault[] = [
  { label: "none (baseline)" },
  { label: "store cut from the primary's node", link: { on: "toStore", node: "node-a", mode: "blackhole" } },
  { label: "store refusing the primary's node", link: { on: "toStore", node: "node-a", mode: "reset" } },
  {
    label: "replica's node cut from the primary's",
    link: { on: "toNode", node: "node-a", mode: "blackhole" },
  },
  {
    label: "primary's answers to the replica's node lost (one way)",
    link: { on: "toNode", node: "node-a", mode: "one-way", direction: "from-target" },
  },
  { label: "50 ms each way between the nodes", delayMs: 50 },
  { label: "store cut from the replica's node", link: { on: "toStore", node: "node-b", mode: "blackhole" } },
  // Last: the replica's node takes the primary over (SHOAL_FAILOVER_AFTER_MS) while the old one is cut off.
  { label: "primary's node isolated, failover", isolate: "node-a" },
];

/** Applies the fault; returns what heals it. */
function apply(c: FaultyCluster, f: Fault): (() => void) | undefined {
  if (f.isolate) return c.isolate(f.isolate);
  if (f.delayMs) {
    const links = [...c.toNode.values()];
    for (const l of links) l.delay(f.delayMs);
    return () => {
      for (const l of links) l.heal();
    };
  }
  if (!f.link) return undefined;
  const proxy = c[f.link.on].get(f.link.node)!;
  proxy.cut(f.link.mode, f.link.direction);
  return () => proxy.heal();
}

async function caughtUp(c: FaultyCluster, ms: number): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    const [primary, replica] = [await c.finalState(), await c.replicaState()];
    if ([...primary].every(([name, ns]) => (replica.get(name)?.size ?? 0) === ns.size))
      return Date.now() - started;
    await sleep(50);
  }
  return undefined;
}

export async function partitionsBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  const outageMs = opts.quick ? 2 * LEASE_MS : 3 * LEASE_MS;
  const perNode = opts.quick ? 2 : 4;
  // Failover waits as long as the other faults last: only the isolation lasts long enough for it.
  const c = await startFaultyCluster(LEASE_MS, { SHOAL_FAILOVER_AFTER_MS: String(outageMs) });
  const rows: string[][] = [];
  const out: Record<string, unknown> = { leaseMs: LEASE_MS, outageMs, clientsPerNode: perNode };
  try {
    for (const [i, f] of FAULTS.entries()) {
      process.stderr.write(`  partitions: ${f.label}\n`);
      const load = runWorkload(c.clients(`run${i}`, perNode), { timeoutMs: 40_000, pauseMs: 10 });
      await sleep(2000);
      const cutAt = Date.now();
      const heal = apply(c, f);
      // The isolation lasts until the lease has run out and the failover wait has passed, and then some.
      await sleep(f.isolate ? 2 * outageMs + LEASE_MS + 5000 : outageMs);
      const healAt = Date.now();
      heal?.();
      await sleep(LEASE_MS);
      const history = await load.stop();
      const problems = checkHistory(history, await c.finalState());
      const catchUp = await caughtUp(c, 60_000);
      const fig = partitionFigures(history, cutAt, healAt);
      out[f.label] = { ...fig, problems, catchUpMs: catchUp };
      const ms = (n: number | undefined) => (n === undefined ? "-" : fmt(n));
      rows.push([
        f.label,
        fmt(fig.writesOk),
        ms(fig.writeP50Ms),
        fmt(fig.writesRefused),
        fmt(fig.writesUnknown),
        ms(heal ? fig.firstRefusedMs : undefined),
        ms(heal ? fig.writesBackMs : undefined),
        ms(fig.slowestReadMs),
        ms(catchUp),
        problems.length === 0 ? "none" : `${problems.length}: ${problems[0]}`,
      ]);
    }
  } finally {
    await c.close();
  }
  console.log(
    `\nFaults between two nodes and PostgreSQL: each held ${outageMs / 1000} s, lease ${LEASE_MS / 1000} s, ${perNode} clients through each node writing and reading\n`,
  );
  console.log(
    table(
      [
        "fault",
        "writes ok",
        "write p50 ms",
        "refused",
        "unknown",
        "first refusal ms",
        "writes back ms",
        "slowest read ms",
        "replica caught up ms",
        "history problems",
      ],
      rows,
    ),
  );
  return { partitions: out };
}
