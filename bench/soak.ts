/**
 * A soak of many databases: thousands are created, then used in rounds (a write and a read each),
 * far more of them than the connections the node keeps open (`SHOAL_MAX_CONNECTIONS`, 64 here), so
 * every round opens and closes nearly all of them again. Descriptors and memory of the node's processes are read
 * after each round: they must stay flat, not grow with the rounds (the `libsql` package was
 * reported to leak a descriptor per connection that prepared a statement, libsql-js #230).
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BenchOptions, fmt, table } from "./harness.js";
import { ADMIN, ensureBuilt, post, startShoalProcess } from "./shards-servers.js";

const SHARDS = 2;
/** Connections the node keeps open (`SHOAL_MAX_CONNECTIONS`): far fewer than the databases used. */
const MAX_CONNECTIONS = 64;

function descriptors(pids: number[]): number {
  let n = 0;
  for (const pid of pids) {
    try {
      n += readdirSync(`/proc/${pid}/fd`).length;
    } catch {
      // Gone, or not Linux.
    }
  }
  return n;
}

function rssMb(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      kb += Number(m?.[1] ?? 0);
    } catch {
      // Gone, or not Linux.
    }
  }
  return kb / 1024;
}

const stmt = (sql: string, args: unknown[] = []) => ({
  type: "execute",
  stmt: { sql, args: args.map((a) => ({ type: "integer", value: String(a) })) },
});

export async function soakBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  await ensureBuilt();
  const count = opts.quick ? 400 : 2000;
  const rounds = opts.quick ? 3 : 6;
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-soak-"));
  const shoal = await startShoalProcess(dir, SHARDS, undefined, {
    SHOAL_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
  });
  try {
    const api = (p: string, body?: unknown) => post(`${shoal.url}${p}`, ADMIN, body);
    await api("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" });
    const names = Array.from({ length: count }, (_, i) => `soak-${i}`);
    process.stderr.write(`  soak: creating ${count} databases\n`);
    for (let i = 0; i < count; i += 16)
      await Promise.all(
        names
          .slice(i, i + 16)
          .map((name) => api("/v1/organizations/admin/databases", { name, group: "default" })),
      );
    const jwt = (await api("/v1/organizations/admin/groups/default/auth/tokens")).jwt as string;
    const sample = () => ({ fds: descriptors(shoal.pids), rss: rssMb(shoal.pids) });
    const samples = [{ round: "created", ...sample(), seconds: 0 }];
    for (let round = 1; round <= rounds; round++) {
      process.stderr.write(`  soak: round ${round}/${rounds} over ${count} databases\n`);
      const started = performance.now();
      for (let i = 0; i < count; i += 32)
        await Promise.all(
          names.slice(i, i + 32).map((name) =>
            post(`${shoal.url}/db/admin/${name}/v2/pipeline`, jwt, {
              requests: [
                ...(round === 1 ? [stmt("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")] : []),
                stmt("INSERT INTO t (n) VALUES (?)", [round]),
                stmt("SELECT count(*) FROM t"),
                { type: "close" },
              ],
            }),
          ),
        );
      samples.push({ round: String(round), ...sample(), seconds: (performance.now() - started) / 1000 });
    }
    const first = samples[1]!;
    const last = samples.at(-1)!;
    console.log(
      `\nSoak: ${count} databases used in ${rounds} rounds (a write and a read each), ${SHARDS} shards keeping ${MAX_CONNECTIONS} connections open, all of the node's processes\n`,
    );
    console.log(
      table(
        ["after", "descriptors", "RSS MB", "round s"],
        samples.map((s) => [s.round, fmt(s.fds), fmt(s.rss), s.seconds ? fmt(s.seconds, 1) : ""]),
      ),
    );
    console.log(
      `\nlast round / first round: descriptors ${fmt(last.fds / first.fds, 2)}, RSS ${fmt(last.rss / first.rss, 2)}`,
    );
    return { soak: { count, rounds, samples } };
  } finally {
    await shoal.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
