import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  baseline,
  p99Bound,
  processTree,
  quantile,
  type ServerProcess,
  startProbe,
  startServerProcess,
  summary,
  type Tenant,
  tenantOn as tenantOnShard,
} from "../helpers/isolation.js";
import { ADMIN_TOKEN } from "../helpers/shoal.js";

/**
 * What a node's shard processes are for, beyond cores: a statement that ends or stops its process
 * takes only that shard's databases down, for as long as the shard takes to start again, and a
 * database that keeps doing it is refused for a while. Shoal runs in a process of its own, with
 * two shards; tenant B is on the other shard from A and is timed from a worker thread meanwhile.
 */
const SHARDS = 2;
const LIMIT_MS = 1000;
/** TEXT that isn't UTF-8: the libsql driver panics converting it, which aborts its process. */
const POISON = "SELECT CAST(x'ff' AS TEXT) AS v";
const SEED = `CREATE TABLE kv (id INTEGER PRIMARY KEY, v TEXT);
  INSERT INTO kv (id, v) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) SELECT i, 'value-' || i FROM n;
  CREATE TABLE log (id INTEGER PRIMARY KEY, v TEXT);`;

let server: ServerProcess;
/** A and C share a shard; B and D the other one. */
let a: Tenant;
let b: Tenant;
let c: Tenant;
let d: Tenant;

/** A new tenant whose database the shard `index` owns. */
const tenantOn = (index: number) => tenantOnShard(server, SEED, index, SHARDS);

/** The pid of shard `index` of the node (its command line names it). */
function shardPid(index: number): number {
  for (const pid of processTree(server.pid)) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (argv.some((a) => a.endsWith("shard-main.ts")) && argv.includes(String(index))) return pid;
    } catch {
      // Ended meanwhile.
    }
  }
  throw new Error(`no process for shard ${index}`);
}

async function count(t: Tenant): Promise<number> {
  const client = t.client();
  try {
    return Number((await client.execute("SELECT count(*) AS n FROM kv")).rows[0]!.n);
  } finally {
    client.close();
  }
}

/** Resolves once `t`'s database answers again, with how long that took. */
async function answersAgain(t: Tenant, withinMs = 20_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    try {
      if ((await count(t)) === 1000) return performance.now() - started;
    } catch {
      if (performance.now() - started > withinMs) throw new Error(`${t.name} didn't answer again`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function metric(name: string): Promise<string[]> {
  const r = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return (await r.text()).split("\n").filter((l) => l.startsWith(name));
}

beforeAll(async () => {
  server = await startServerProcess({
    SHOAL_WORKERS: String(SHARDS),
    SHOAL_STATEMENT_TIMEOUT_MS: String(LIMIT_MS),
  });
  a = await tenantOn(0);
  c = await tenantOn(0);
  b = await tenantOn(1);
  d = await tenantOn(1);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe("a shard that ends", () => {
  it("takes only its own databases down, until it is started again: the other shard's are served throughout", async () => {
    const bound = p99Bound(50, await baseline(b));
    const probe = await startProbe(b);
    const client = a.client();
    await expect(client.execute(POISON)).rejects.toThrow();
    client.close();
    const backAfter = await answersAgain(a);
    const reads = await probe.stop();
    console.log(
      summary("B while A's shard died and came back", reads),
      `| A back after ${backAfter.toFixed(0)} ms`,
    );
    expect(reads.errors).toEqual([]);
    expect(quantile(reads.ms, 0.99)).toBeLessThan(bound);
    // A's neighbour on the same shard is back too, and nothing was lost.
    expect(await count(c)).toBe(1000);
    expect(server.output()).toMatch(/"how":"ended by SIGABRT".*"runningDatabase":"[0-9a-f-]{36}"/);
    expect(server.output()).toContain(`"runningDatabase":"${a.id}"`);
    expect(await metric('shoal_shard_restarts_total{reason="crashed"}')).toEqual([
      'shoal_shard_restarts_total{reason="crashed"} 1',
    ]);
  });

  it("refuses a database whose statements end it a second time, for a while, and serves the rest", async () => {
    const client = a.client();
    await expect(client.execute(POISON)).rejects.toThrow();
    client.close();
    await answersAgain(c);
    const r = await fetch(`${a.http}v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.token}` },
      body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql: "SELECT 1" } }] }),
    });
    expect(r.status).toBe(503);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(500);
    const body = (await r.json()) as { code: string; message: string };
    expect(body.code).toBe("DATABASE_QUARANTINED");
    expect(body.message).toMatch(/refused until \d{4}-\d\d-\d\dT/);
    // Over WebSocket too, refused at the upgrade.
    const ws = a.client("ws");
    await expect(ws.execute("SELECT 1")).rejects.toThrow(/503|DATABASE_QUARANTINED/);
    ws.close();
    expect(server.output()).toContain(`"dbId":"${a.id}","crashes":2`);
    expect(await metric("shoal_databases_quarantined")).toContain("shoal_databases_quarantined 1");
    // The other databases of its shard, and the other shard's, are served.
    expect(await count(c)).toBe(1000);
    expect(await count(b)).toBe(1000);
  });

  it("serves the connections that arrive while it dies once it is back: none is left hanging", async () => {
    // Killed from outside, twice: each time, requests made at once (the first ones before the
    // node has even noticed) are answered once the shard is back, or fail at once; none waits
    // for ever on a connection handed to the process that died.
    const timedOut: number[] = [];
    for (const round of [1, 2]) {
      process.kill(shardPid(1), "SIGKILL");
      const started = performance.now();
      for (;;) {
        const r = await fetch(`${d.http}v2/pipeline`, {
          method: "POST",
          headers: { authorization: `Bearer ${d.token}` },
          body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql: "SELECT count(*) FROM kv" } }] }),
          signal: AbortSignal.timeout(5000),
        }).then(
          (res) => res.status,
          (e: Error) => e.name,
        );
        if (r === "TimeoutError") timedOut.push(round);
        if (r === 200) break;
        expect(performance.now() - started).toBeLessThan(20_000);
        await new Promise((res) => setTimeout(res, 20));
      }
      // Past the keep-alive timeouts: the next round's requests come on new connections.
      if (round === 1) await new Promise((res) => setTimeout(res, 6000));
    }
    expect(timedOut).toEqual([]);
    expect(await count(d)).toBe(1000);
    // A kill from outside says nothing of which database was at fault: no quarantine for it.
    expect(server.output()).not.toContain(`"dbId":"${d.id}","crashes"`);
  });

  it("is killed within the limit plus a second when its event loop stops answering, and started again", async () => {
    const probe = await startProbe(b);
    const pid = shardPid(0);
    const stoppedAt = Date.now();
    process.kill(pid, "SIGSTOP");
    const backAfter = await answersAgain(c);
    const reads = await probe.stop();
    console.log(summary("B while shard 0 was stuck", reads), `| C back after ${backAfter.toFixed(0)} ms`);
    expect(reads.errors).toEqual([]);
    expect(shardPid(0)).not.toBe(pid);
    // Killed once its loop was silent for the statement limit plus a second: pings go out and are
    // checked twice a second, so the silence is noticed up to a second later than it began.
    const killed = server
      .output()
      .split("\n")
      .find((l) => l.includes("a shard's event loop stopped answering; killing it"));
    const killedAt = JSON.parse(killed!).time as number;
    console.log(`shard 0 stopped; killed ${killedAt - stoppedAt} ms later`);
    expect(killedAt - stoppedAt).toBeGreaterThanOrEqual(LIMIT_MS + 1000 - 500);
    expect(killedAt - stoppedAt).toBeLessThan(LIMIT_MS + 1000 + 1000 + 250);
    expect(await metric('shoal_shard_restarts_total{reason="killed"}')).toEqual([
      'shoal_shard_restarts_total{reason="killed"} 1',
    ]);
    expect(await count(d)).toBe(1000);
  });
});
