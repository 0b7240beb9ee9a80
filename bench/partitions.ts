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
import type { CutMode } from "../test/helpers/tcp-proxy.js";
import { type BenchOptions, fmt, table } from "./harness.js";

const LEASE_MS = 10_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Fault {
  label: string;
  link?: { on: "toStore" | "toNode"; node: string; mode: CutMode };
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
  { label: "store cut from the replica's node", link: { on: "toStore", node: "node-b", mode: "blackhole" } },
  // Last: the replica's node takes the primary over (SHOAL_FAILOVER_AFTER_MS) while the old one is cut off.
  { label: "primary's node isolated, failover", isolate: "node-a" },
];

/** The proxies a fault cuts. */
function linksOf(c: FaultyCluster, f: Fault) {
  if (f.link) return [{ proxy: c[f.link.on].get(f.link.node)!, mode: f.link.mode }];
  if (!f.isolate) return [];
  const other = f.isolate === "node-a" ? "node-b" : "node-a";
  return [c.toStore.get(f.isolate)!, c.toNode.get(f.isolate)!, c.toNode.get(other)!].map((proxy) => ({
    proxy,
    mode: "blackhole" as CutMode,
  }));
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
      const links = linksOf(c, f);
      for (const l of links) l.proxy.cut(l.mode);
      // The isolation lasts until the lease has run out and the failover wait has passed, and then some.
      await sleep(f.isolate ? 2 * outageMs + LEASE_MS + 5000 : outageMs);
      const healAt = Date.now();
      for (const l of links) l.proxy.heal();
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
        fmt(fig.writesRefused),
        fmt(fig.writesUnknown),
        ms(links.length ? fig.firstRefusedMs : undefined),
        ms(links.length ? fig.writesBackMs : undefined),
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
