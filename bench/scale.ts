/**
 * Control-plane scale: how the cost of creating, listing and getting a database grows with the
 * number of databases that exist, on the embedded store and on PostgreSQL. Every database is made
 * by a real `POST .../databases` through the HTTP API (row, audit entry and libSQL file), one
 * organization holding them all (the worst case for per-organization work). At each size it
 * measures sequential creates (latency), concurrent creates (throughput), a page of 100 from the
 * list, a get by name, and creates under a plan with a database quota (which counts). At the
 * largest size it makes 100 databases busy with SQL and reports the service's memory.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/lib/logger.js";
import { type Shoal, startShoal } from "../src/main.js";
import { startPostgres } from "../test/helpers/postgres.js";
import { type BenchOptions, fmt, table } from "./harness.js";

const ADMIN = "bench-admin-token-0123456789";
const ORG = "admin";

interface SizeResult {
  store: string;
  databases: number;
  createP50: number;
  createP99: number;
  createsPerSecond: number;
  quotaCreateP50: number;
  listP50: number;
  listP99: number;
  getP50: number;
  getP99: number;
}

interface MemoryResult {
  store: string;
  databases: number;
  busy: number;
  rssMb: number;
  heapMb: number;
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

function client(shoal: Shoal) {
  return async (method: string, p: string, body?: unknown, token = ADMIN) => {
    const r = await fetch(`${shoal.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await r.json()) as Record<string, any>;
    if (r.status !== 200) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };
}

type Call = ReturnType<typeof client>;

/** Runs `n` calls of `fn`, `concurrency` at a time; returns each call's latency in ms. */
async function timed(n: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      const t = performance.now();
      await fn(i);
      out.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return out.sort((x, y) => x - y);
}

async function measureStore(
  store: "sqlite" | "postgres",
  metadataUrl: string | undefined,
  opts: BenchOptions,
): Promise<{ sizes: SizeResult[]; memory: MemoryResult }> {
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-scale-"));
  const env = {
    SHOAL_DATA_DIR: dir,
    SHOAL_PORT: "0",
    SHOAL_ADMIN_TOKEN: ADMIN,
    SHOAL_LOG_LEVEL: "silent",
    ...(metadataUrl ? { SHOAL_METADATA_URL: metadataUrl } : {}),
  };
  const shoal = await startShoal(loadConfig(env, "bench"), {
    log: createLogger("silent"),
    announce: () => {},
  });
  const api: Call = client(shoal);
  await api("POST", `/v1/organizations/${ORG}/groups`, { name: "default", location: "aws-us-east-1" });
  // A database quota that is never reached (on the organization's plan): creates under it pay
  // for counting the organization's databases.
  const setQuota = (databases: number | null) =>
    shoal.deps.store.write((r) => r.plans.update("self-hosted", { databases }));

  const sizes = opts.quick ? [200, 1000] : [1000, 10_000, 100_000];
  const per = opts.quick
    ? { latency: 100, throughput: 100, reads: 100, quota: 50 }
    : { latency: 300, throughput: 500, reads: 300, quota: 200 };
  let made = 0;
  /** Databases named `db-<n>`, the ones gets pick from. */
  let named = 0;
  const create = (name: string) =>
    api("POST", `/v1/organizations/${ORG}/databases`, { name, group: "default" });
  const name = (i: number) => `db-${String(i).padStart(7, "0")}`;
  const results: SizeResult[] = [];
  for (const size of sizes) {
    // Grow to `size` with real creates, 8 at a time.
    const from = named;
    const adding = size - made;
    const started = performance.now();
    await timed(adding, 8, (i) => create(name(from + i)));
    named += adding;
    made = size;
    const growMs = performance.now() - started;
    process.stderr.write(
      `  ${store}: ${fmt(size)} databases (${fmt(adding)} created at ${fmt((adding / growMs) * 1000)}/s)\n`,
    );

    const seq = await timed(per.latency, 1, (i) => create(`seq-${size}-${i}`));
    const t = performance.now();
    await timed(per.throughput, 8, (i) => create(`par-${size}-${i}`));
    const perSecond = (per.throughput / (performance.now() - t)) * 1000;
    await setQuota(1e9);
    const quota = await timed(per.quota, 1, (i) => create(`quota-${size}-${i}`));
    await setQuota(null);
    const list = await timed(per.reads, 1, () => api("GET", `/v1/organizations/${ORG}/databases?limit=100`));
    const get = await timed(per.reads, 1, (i) =>
      api("GET", `/v1/organizations/${ORG}/databases/${name((i * 7919) % named)}`),
    );
    made += per.latency + per.throughput + per.quota;
    results.push({
      store,
      databases: size,
      createP50: pct(seq, 50),
      createP99: pct(seq, 99),
      createsPerSecond: perSecond,
      quotaCreateP50: pct(quota, 50),
      listP50: pct(list, 50),
      listP99: pct(list, 99),
      getP50: pct(get, 50),
      getP99: pct(get, 99),
    });
  }

  // 100 databases busy: each gets a table and keeps running statements while memory is read.
  const busy = Math.min(100, sizes.at(-1)!);
  const tokens = await Promise.all(
    Array.from({ length: busy }, async (_, i) => {
      const db = name(i);
      const jwt = (await api("POST", `/v1/organizations/${ORG}/databases/${db}/auth/tokens`)).jwt as string;
      return { db, jwt };
    }),
  );
  const run = (db: string, jwt: string, sql: string) =>
    fetch(`${shoal.url}/db/${ORG}/${db}/v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${jwt}` },
      body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql } }, { type: "close" }] }),
    }).then((r) => r.text());
  await Promise.all(
    tokens.map((t) => run(t.db, t.jwt, "CREATE TABLE IF NOT EXISTS kv (k INTEGER PRIMARY KEY, v TEXT)")),
  );
  let peakRss = 0;
  let peakHeap = 0;
  const deadline = Date.now() + (opts.quick ? 1000 : 5000);
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, 100);
  await Promise.all(
    tokens.map(async (t) => {
      for (let i = 0; Date.now() < deadline; i++) {
        await run(t.db, t.jwt, `INSERT INTO kv (v) VALUES ('value-${i}')`);
        await run(t.db, t.jwt, "SELECT count(*) FROM kv");
      }
    }),
  );
  clearInterval(sampler);
  const memory: MemoryResult = {
    store,
    databases: made,
    busy,
    rssMb: peakRss / 2 ** 20,
    heapMb: peakHeap / 2 ** 20,
  };
  await shoal.close();
  await rm(dir, { recursive: true, force: true });
  return { sizes: results, memory };
}

export async function scaleBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  console.log("\nControl-plane scale: one organization, real creates through the API");
  const sqlite = await measureStore("sqlite", undefined, opts);
  const pg = await startPostgres();
  let postgres: Awaited<ReturnType<typeof measureStore>>;
  try {
    postgres = await measureStore("postgres", await pg.newDatabase(), opts);
  } finally {
    await pg.stop();
  }
  const rows = [...sqlite.sizes, ...postgres.sizes];
  console.log(
    `\n${table(
      [
        "store",
        "databases",
        "create p50 ms",
        "create p99 ms",
        "creates/s (8 at once)",
        "create p50 ms, quota plan",
        "list 100 p50 ms",
        "list 100 p99 ms",
        "get p50 ms",
        "get p99 ms",
      ],
      rows.map((r) => [
        r.store,
        fmt(r.databases),
        fmt(r.createP50, 2),
        fmt(r.createP99, 2),
        fmt(r.createsPerSecond),
        fmt(r.quotaCreateP50, 2),
        fmt(r.listP50, 2),
        fmt(r.listP99, 2),
        fmt(r.getP50, 2),
        fmt(r.getP99, 2),
      ]),
    )}`,
  );
  const growth: Record<string, number> = {};
  for (const s of [sqlite, postgres]) {
    const first = s.sizes[0]!;
    const last = s.sizes.at(-1)!;
    const ratio = last.createP50 / first.createP50;
    growth[first.store] = ratio;
    console.log(
      `${first.store}: create p50 growth ${fmt(last.databases)} / ${fmt(first.databases)} = ${fmt(ratio, 2)} (goal ≤ 1.2)`,
    );
  }
  console.log("\nService memory (this process: Shoal plus the bench's own clients), peak while busy");
  console.log(
    table(
      ["store", "databases", "busy", "RSS MiB", "JS heap MiB"],
      [sqlite.memory, postgres.memory].map((m) => [
        m.store,
        fmt(m.databases),
        fmt(m.busy),
        fmt(m.rssMb),
        fmt(m.heapMb),
      ]),
    ),
  );
  return { scale: { sizes: rows, growth, memory: [sqlite.memory, postgres.memory] } };
}
