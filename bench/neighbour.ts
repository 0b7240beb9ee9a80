/**
 * A neighbour beside a flood: the red team's floods on one database, each while another tenant's
 * point reads are timed one after another. The neighbour's p99 is compared with its p99 alone, in
 * the same run, for a neighbour on the flooded database's shard and for one on another shard.
 * The floods (bench/floods.ts): 2,000 requests in flight (the worst the red team found), pipelines
 * of 100,000 statements, 2,000 clients opening batons, and 8,000 WebSocket streams.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ownerOf } from "../src/shards/ownership.js";
import { type Flood, inFlight, longPipelines, openBatons, webSocketStreams } from "./floods.js";
import { type BenchOptions, fmt, load, table } from "./harness.js";
import { ADMIN, dbName, ensureBuilt, seedShoal, startShoalProcess } from "./shards-servers.js";

const SHARDS = 2;
/** The p99 a neighbour should keep on 2 cores (issue 29). */
const GOAL_MS = 100;
const FLOODS: Flood[] = [inFlight(2000), longPipelines(100_000), openBatons(2000), webSocketStreams(63, 128)];

const read = (id: number) =>
  JSON.stringify({
    requests: [
      {
        type: "execute",
        stmt: { sql: "SELECT v FROM kv WHERE id = ?", args: [{ type: "integer", value: String(id) }] },
      },
      { type: "close" },
    ],
  });

export async function neighbourBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  await ensureBuilt();
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-neighbour-"));
  const shoal = await startShoalProcess(dir, SHARDS);
  try {
    const jwt = await seedShoal(shoal, 8);
    const listed = await fetch(`${shoal.url}/v1/organizations/admin/databases`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    }).then((r) => r.json() as Promise<{ databases: Array<{ Name: string; DbId: string }> }>);
    const shard = new Map(listed.databases.map((d) => [d.Name, ownerOf(d.DbId, SHARDS)]));
    const flooded = dbName(0);
    const names = [...shard.keys()].filter((n) => n !== flooded);
    const same = names.find((n) => shard.get(n) === shard.get(flooded));
    const other = names.find((n) => shard.get(n) !== shard.get(flooded));
    const bodies = Array.from({ length: 200 }, (_, i) => read(1 + ((i * 7919) % 10_000)));
    const headers = { authorization: `Bearer ${jwt}` };
    const timing = opts.quick ? { warmupMs: 300, durationMs: 2000 } : { warmupMs: 500, durationMs: 5000 };
    const probe = (name: string) =>
      load({
        url: shoal.url,
        headers,
        bodies,
        paths: [`/db/admin/${name}/v2/pipeline`],
        concurrency: 1,
        ...timing,
      });
    const rows: string[][] = [];
    const out: Record<string, unknown> = { shards: SHARDS, goalMs: GOAL_MS };
    for (const flood of FLOODS) {
      for (const [where, name] of [
        ["its shard", same],
        ["another shard", other],
      ] as const) {
        if (!name) continue;
        process.stderr.write(`  neighbour: alone, then beside ${flood.label}, on ${where}\n`);
        const alone = await probe(name);
        const running = flood.start({ url: shoal.url, jwt, db: flooded }, timing.durationMs + 2000);
        // The flood is under way before the neighbour is timed.
        await new Promise((r) => setTimeout(r, 1000));
        const beside = await probe(name);
        const flooding = await running.stop();
        // Streams and sockets the flood left go before the next one starts.
        await new Promise((r) => setTimeout(r, 1000));
        rows.push([
          flood.label,
          where,
          fmt(alone.p99Ms, 1),
          fmt(beside.p50Ms, 1),
          fmt(beside.p99Ms, 1),
          String(beside.errors),
          `${fmt(flooding.answered)} / ${fmt(flooding.refused)}`,
          beside.p99Ms <= GOAL_MS ? "yes" : "no",
        ]);
        out[`${flood.label}, ${where}`] = {
          aloneP99Ms: alone.p99Ms,
          besideP50Ms: beside.p50Ms,
          besideP99Ms: beside.p99Ms,
          flood: flooding,
        };
      }
    }
    console.log(
      `\nA neighbour's point reads, one at a time, beside floods on another database (${SHARDS} shards)\n`,
    );
    console.log(
      table(
        [
          "flood",
          "neighbour on",
          "p99 alone ms",
          "p50 beside",
          "p99 beside",
          "errors",
          "flood answered / refused",
          `p99 ≤ ${GOAL_MS} ms`,
        ],
        rows,
      ),
    );
    return { neighbour: out };
  } finally {
    await shoal.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
