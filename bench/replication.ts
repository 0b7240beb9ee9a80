/**
 * Replication: (1) lag from a commit on the primary to the replica having it, under a steady write
 * load, against the writes' own acknowledgement latency in the same run; (2) the cost of adding a
 * location to a group of N databases (building N replicas through the sync protocol), against
 * plainly copying the same database files in the same run.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { createLogger } from "../src/lib/logger.js";
import { type Shoal, startShoal } from "../src/main.js";
import { benchConfig } from "./config.js";
import { type BenchOptions, fmt, table } from "./harness.js";

const ADMIN = "bench-admin-token-0123456789";

async function boot(dir: string): Promise<Shoal> {
  return startShoal(benchConfig(dir, ADMIN, { maxConnections: 256 }), {
    log: createLogger("silent"),
    announce: () => {},
  });
}

function api(shoal: Shoal) {
  return async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`${shoal.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await r.json()) as Record<string, any>;
    if (r.status !== 200) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
};

async function lag(opts: BenchOptions): Promise<Record<string, number>> {
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-rep-"));
  const shoal = await boot(dir);
  const call = api(shoal);
  await call("POST", "/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" });
  await call("POST", "/v1/organizations/admin/groups/default/locations/aws-eu-west-1");
  await call("POST", "/v1/organizations/admin/databases", { name: "lag", group: "default" });
  const jwt = (await call("POST", "/v1/organizations/admin/databases/lag/auth/tokens")).jwt as string;
  const c = createClient({ url: `${shoal.url}/db/admin/lag/`, authToken: jwt });
  await c.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, at INTEGER, body TEXT)");
  await call("GET", "/v1/organizations/admin/groups/default/locations/aws-eu-west-1/wait");

  // A steady load: one write every `intervalMs`, each acknowledged before the next.
  const writes = opts.quick ? 200 : 1000;
  const intervalMs = 5;
  shoal.replication.lag.reset();
  const acks: number[] = [];
  for (let i = 0; i < writes; i++) {
    const started = performance.now();
    await c.execute({
      sql: "INSERT INTO events (at, body) VALUES (?, ?)",
      args: [Date.now(), "x".repeat(200)],
    });
    acks.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  await call("GET", "/v1/organizations/admin/groups/default/locations/aws-eu-west-1/wait");
  const l = shoal.replication.lag.summary();
  c.close();
  await shoal.close();
  await rm(dir, { recursive: true, force: true });
  return {
    writes,
    samples: l.count,
    lagP50: l.p50,
    lagP99: l.p99,
    ackP50: percentile(acks, 0.5),
    ackP99: percentile(acks, 0.99),
  };
}

async function addLocation(n: number): Promise<{ n: number; addMs: number; copyMs: number }> {
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-add-"));
  const shoal = await boot(dir);
  const call = api(shoal);
  await call("POST", "/v1/organizations/admin/groups", { name: "fleet", location: "aws-us-east-1" });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const created = await call("POST", "/v1/organizations/admin/databases", {
      name: `t${i}`,
      group: "fleet",
    });
    ids.push(created.database.DbId as string);
  }
  // Give each database some data, as tenants would have.
  for (const [i, id] of ids.slice(0, Math.min(n, 50)).entries()) {
    const jwt = (await call("POST", `/v1/organizations/admin/databases/t${i}/auth/tokens`)).jwt as string;
    const c = createClient({ url: `${shoal.url}/db/admin/t${i}/`, authToken: jwt });
    await c.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)");
    await c.execute({ sql: "INSERT INTO kv VALUES (?, ?)", args: [id, "y".repeat(1000)] });
    c.close();
  }
  // Baseline: copy every primary file to another folder, the least any replication must do.
  const copyStarted = performance.now();
  const copies = path.join(dir, "plain-copies");
  mkdirSync(copies);
  for (const id of ids)
    copyFileSync(shoal.deps.files.path("aws-us-east-1", id), path.join(copies, `${id}.db`));
  const copyMs = performance.now() - copyStarted;

  const started = performance.now();
  await call("POST", "/v1/organizations/admin/groups/fleet/locations/aws-eu-west-1");
  const addMs = performance.now() - started;
  await shoal.close();
  await rm(dir, { recursive: true, force: true });
  return { n, addMs, copyMs };
}

export async function replicationBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  const l = await lag(opts);
  console.log("\nReplication lag: commit on the primary -> the replica has it (steady writes, 1 replica)");
  console.log(
    table(
      ["measure", "p50 ms", "p99 ms"],
      [
        ["write acknowledged (baseline)", fmt(l.ackP50!, 2), fmt(l.ackP99!, 2)],
        ["replica has the write", fmt(l.lagP50!, 2), fmt(l.lagP99!, 2)],
        ["ratio lag / ack", fmt(l.lagP50! / l.ackP50!, 2), fmt(l.lagP99! / l.ackP99!, 2)],
      ],
    ),
  );
  console.log(`${l.writes} writes, ${l.samples} lag samples`);

  const sizes = opts.quick ? [10, 100] : [10, 100, 1000];
  const adds = [];
  for (const n of sizes) adds.push(await addLocation(n));
  console.log(
    "\nAdding a location to a group of N databases (replicas built and caught up before it answers)",
  );
  console.log(
    table(
      ["N", "add location ms", "per database ms", "plain file copy ms (baseline)", "ratio"],
      adds.map((a) => [
        fmt(a.n),
        fmt(a.addMs),
        fmt(a.addMs / a.n, 2),
        fmt(a.copyMs, 1),
        fmt(a.addMs / a.copyMs, 1),
      ]),
    ),
  );
  return { replicationLag: l, addLocation: adds };
}
