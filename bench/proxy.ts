/**
 * The cost of the extra hop when a node that doesn't hold a database answers it: point reads sent
 * straight to node A (which holds the database) against the same reads sent to node B, which
 * forwards them to A. Two real `shoal` processes on one PostgreSQL, each with its own data folder.
 * Measured one request at a time (the latency a client sees) and with 16 in flight (throughput).
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadOrCreateSigningKey } from "../src/lib/signing-keys.js";
import { startPostgres } from "../test/helpers/postgres.js";
import { type ShoalProcess, spawnShoal } from "../test/helpers/process.js";
import { type BenchOptions, fmt, load, table } from "./harness.js";
import { cpuSeconds } from "./load-spread.js";

const ADMIN = "bench-admin-token-0123456789";
const ROWS = 1000;

async function post(base: string, p: string, token: string, body?: unknown): Promise<Record<string, any>> {
  const r = await fetch(`${base}${p}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Record<string, any>;
}

/** Two nodes: A starts first and holds every location, B holds none; both go into `started`. */
async function twoNodes(dir: string, metadataUrl: string, started: ShoalProcess[]): Promise<ShoalProcess[]> {
  // Made by mkdtemp: private (0700), as a data folder must be.
  const [dirA, dirB] = [await mkdtemp(path.join(dir, "a-")), await mkdtemp(path.join(dir, "b-"))];
  await loadOrCreateSigningKey(path.join(dirA, "keys"), "db-tokens");
  await loadOrCreateSigningKey(path.join(dirA, "keys"), "api-tokens");
  await cp(path.join(dirA, "keys"), path.join(dirB, "keys"), { recursive: true });
  const env = (d: string, id: string) => ({
    SHOAL_DATA_DIR: d,
    SHOAL_METADATA_URL: metadataUrl,
    SHOAL_ADMIN_TOKEN: ADMIN,
    SHOAL_NODE_ID: id,
    SHOAL_LOG_LEVEL: "info",
  });
  started.push(await spawnShoal(env(dirA, "node-a"), 60_000));
  started.push(await spawnShoal(env(dirB, "node-b"), 60_000));
  return started;
}

/** A database on A with `ROWS` rows; its token and point-read requests for them. */
async function pointReads(a: ShoalProcess): Promise<{ jwt: string; bodies: string[] }> {
  await post(a.url, "/v1/organizations/admin/groups", ADMIN, { name: "default" });
  await post(a.url, "/v1/organizations/admin/databases", ADMIN, { name: "bench" });
  const jwt = (await post(a.url, "/v1/organizations/admin/databases/bench/auth/tokens", ADMIN)).jwt;
  const execute = (sql: string, args: unknown[] = []) => ({ type: "execute", stmt: { sql, args } });
  await post(a.url, "/db/admin/bench/v2/pipeline", jwt, {
    requests: [
      execute("CREATE TABLE kv (id INTEGER PRIMARY KEY, v TEXT)"),
      execute(`INSERT INTO kv SELECT value, 'value-' || value FROM generate_series(1, ${ROWS})`),
      { type: "close" },
    ],
  });
  const bodies = Array.from({ length: 200 }, (_, i) =>
    JSON.stringify({
      requests: [
        execute("SELECT v FROM kv WHERE id = ?", [{ type: "integer", value: String(1 + i) }]),
        { type: "close" },
      ],
    }),
  );
  return { jwt, bodies };
}

type Timing = { warmupMs: number; durationMs: number; rounds: number };

/** Runs the reads against A and through B, alternating, keeping each one's best run. */
async function compare(
  a: ShoalProcess,
  b: ShoalProcess,
  reads: { jwt: string; bodies: string[] },
  t: Timing,
) {
  const measure = async (node: ShoalProcess, concurrency: number) => {
    const before = [cpuSeconds(a.proc.pid), cpuSeconds(b.proc.pid)];
    const r = await load({
      url: `${node.url}/db/admin/bench/v2/pipeline`,
      headers: { authorization: `Bearer ${reads.jwt}` },
      bodies: reads.bodies,
      concurrency,
      warmupMs: t.warmupMs,
      durationMs: t.durationMs,
    });
    if (r.errors > 0) throw new Error(`${node === a ? "direct" : "via B"}: ${r.errors} errors`);
    const after = [cpuSeconds(a.proc.pid), cpuSeconds(b.proc.pid)];
    // Requests over the whole call (the warm-up too), at the measured rate.
    const sent = r.perSecond * ((t.warmupMs + t.durationMs) / 1000);
    const cpuUs = (i: number) =>
      before[i] === undefined || after[i] === undefined
        ? Number.NaN
        : ((after[i]! - before[i]!) * 1e6) / sent;
    return { ...r, cpuUsA: cpuUs(0), cpuUsB: cpuUs(1) };
  };
  const results = [];
  for (const concurrency of [1, 16]) {
    let direct = await measure(a, concurrency);
    let via = await measure(b, concurrency);
    // Alternated, so drift on a shared machine hits both alike.
    for (let round = 1; round < t.rounds; round++) {
      const d = await measure(a, concurrency);
      if (d.perSecond > direct.perSecond) direct = d;
      const v = await measure(b, concurrency);
      if (v.perSecond > via.perSecond) via = v;
    }
    results.push({
      concurrency,
      directPerSecond: direct.perSecond,
      viaPerSecond: via.perSecond,
      throughputRatio: via.perSecond / direct.perSecond,
      directP50Ms: direct.p50Ms,
      viaP50Ms: via.p50Ms,
      hopP50Ms: via.p50Ms - direct.p50Ms,
      directP99Ms: direct.p99Ms,
      viaP99Ms: via.p99Ms,
      /** CPU per request of the holder, and of the forwarding node, in microseconds. */
      holderCpuUs: direct.cpuUsA,
      viaHolderCpuUs: via.cpuUsA,
      forwarderCpuUs: via.cpuUsB,
    });
  }
  return results;
}

function print(results: Awaited<ReturnType<typeof compare>>, t: Timing): void {
  console.log("\nAny node answers any database: point reads sent to the holder (A) vs to another node (B)");
  console.log(`(B forwards to A; ${t.durationMs / 1000}s per run, best of ${t.rounds}, same run)\n`);
  const headers = ["in flight", "A req/s", "via B req/s", "ratio", "A p50 ms", "via B p50 ms"];
  headers.push("hop p50 ms", "A p99", "via B p99", "A cpu us/req", "B cpu us/req");
  const rows = results.map((r) => [
    String(r.concurrency),
    fmt(r.directPerSecond),
    fmt(r.viaPerSecond),
    fmt(r.throughputRatio, 2),
    fmt(r.directP50Ms, 2),
    fmt(r.viaP50Ms, 2),
    fmt(r.hopP50Ms, 2),
    fmt(r.directP99Ms, 2),
    fmt(r.viaP99Ms, 2),
    fmt(r.holderCpuUs),
    fmt(r.forwarderCpuUs),
  ]);
  console.log(table(headers, rows));
  console.log("\nA cpu: the holder's CPU per request when asked directly; B cpu: the forwarding node's per");
  console.log("forwarded request (CPU time from /proc, steadier than rates on a shared machine).");
}

export async function proxyBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-proxy-"));
  const started: ShoalProcess[] = [];
  const pg = await startPostgres().catch(async (e: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw e;
  });
  try {
    const [a, b] = (await twoNodes(dir, await pg.newDatabase(), started)) as [ShoalProcess, ShoalProcess];
    const t = opts.quick
      ? { warmupMs: 300, durationMs: 1500, rounds: 1 }
      : { warmupMs: 1000, durationMs: 4000, rounds: 3 };
    const results = await compare(a, b, await pointReads(a), t);
    print(results, t);
    return { proxy: results };
  } finally {
    for (const p of started) p.proc.kill("SIGTERM");
    await Promise.all(started.map((p) => p.exited));
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
