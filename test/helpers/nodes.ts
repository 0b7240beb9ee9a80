/**
 * Several real `shoal` processes on loopback, each with its own data folder and its own
 * locations (`SHOAL_NODE_LOCATIONS`), sharing one real PostgreSQL server started for the file.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeEach, onTestFailed } from "vitest";
import { loadOrCreateSigningKey } from "../../src/lib/signing-keys.js";
import { pipeline, sql } from "./dataplane.js";
import { client } from "./http.js";
import { type PostgresServer, startPostgres } from "./postgres.js";
import { type ShoalProcess, spawnShoal } from "./process.js";
import { ADMIN_TOKEN } from "./shoal.js";

export const EAST = "aws-us-east-1";
export const WEST = "aws-eu-west-1";

export interface Cluster {
  metadataUrl: string;
  /** Data folder of each node by id (kept across restarts). */
  dirs: Map<string, string>;
  start(id: string, locations: string, extra?: Record<string, string>): Promise<ShoalProcess>;
  close(): Promise<void>;
}

/** Every node started by this test file, by id, in start order. */
const started: Array<{ id: string; proc: ShoalProcess }> = [];

/**
 * What the nodes logged at warn or above, the last lines of each start: printed when a test of a
 * file using a cluster fails, since CI keeps the test's output and nothing else of the nodes'.
 */
export function notableLines(perNode = 25): string {
  const parts: string[] = [];
  for (const { id, proc } of started) {
    const lines = proc
      .stdout()
      .split("\n")
      .filter((l) => /"level":(40|50|60)/.test(l))
      .slice(-perNode)
      .map((l) => {
        try {
          const { level, time, msg, err, pid: _p, hostname: _h, ...rest } = JSON.parse(l);
          const why = err ? ` err=${JSON.stringify(err.message ?? err)}` : "";
          return `  ${new Date(time).toISOString().slice(11, 23)} ${level} ${msg}${why} ${JSON.stringify(rest)}`;
        } catch {
          return `  ${l.slice(0, 300)}`;
        }
      });
    parts.push(
      `${id} (pid ${proc.proc.pid}, exit ${proc.proc.exitCode ?? proc.proc.signalCode ?? "running"}):`,
    );
    parts.push(...lines);
  }
  return parts.join("\n");
}

/**
 * Called at the top of a test file that starts a cluster: each failed test of the file adds the
 * nodes' warnings to its error, which the report's summary of failures prints at its end (what a
 * test printed itself comes earlier, among the other files' output, and CI shows only the end).
 * (A call, not a hook registered on import: benchmarks import this module too, outside vitest.)
 */
export function printNodeWarningsOnFailure(): void {
  beforeEach(() => {
    onTestFailed(({ task }) => {
      if (!started.length) return;
      const said = `what the nodes logged at warn or above:\n${notableLines(20)}`;
      const error = task.result?.errors?.[0];
      if (error) error.message = `${error.message}\n\n${said}`;
      else console.log(said);
    });
  });
}

/** A PostgreSQL server and a key folder every node gets a copy of; nodes start on demand. */
export async function startCluster(): Promise<Cluster> {
  const server: PostgresServer = await startPostgres();
  const metadataUrl = await server.newDatabase();
  const keys = await mkdtemp(path.join(tmpdir(), "shoal-keys-"));
  await loadOrCreateSigningKey(keys, "db-tokens");
  await loadOrCreateSigningKey(keys, "api-tokens");
  const dirs = new Map<string, string>();
  const procs: ShoalProcess[] = [];
  return {
    metadataUrl,
    dirs,
    async start(id, locations, extra = {}) {
      let dir = dirs.get(id);
      if (!dir) {
        dir = await mkdtemp(path.join(tmpdir(), `shoal-${id}-`));
        await cp(keys, path.join(dir, "keys"), { recursive: true });
        dirs.set(id, dir);
      }
      const p = await spawnShoal({
        SHOAL_DATA_DIR: dir,
        SHOAL_METADATA_URL: metadataUrl,
        SHOAL_ADMIN_TOKEN: ADMIN_TOKEN,
        SHOAL_NODE_ID: id,
        SHOAL_NODE_LOCATIONS: locations,
        SHOAL_LOG_LEVEL: process.env.SHOAL_TEST_NODE_LOG_LEVEL ?? "info",
        ...extra,
      });
      procs.push(p);
      started.push({ id, proc: p });
      return p;
    },
    async close() {
      for (const p of procs) p.proc.kill("SIGKILL");
      await Promise.all(procs.map((p) => p.exited));
      // SHOAL_TEST_LOG_DIR keeps the data folders too, for a look at a failure seen only under load.
      if (!process.env.SHOAL_TEST_LOG_DIR)
        await Promise.all([...dirs.values(), keys].map((d) => rm(d, { recursive: true, force: true })));
      await server.stop();
    },
  };
}

/** Runs one statement at `base` (a database URL ending in `/`); throws on any failure. */
export async function run(base: string, token: string, text: string, args: unknown[] = []): Promise<any> {
  const r = await pipeline(base, token, { requests: [sql(text, args), { type: "close" }] });
  const first = r.body?.results?.[0];
  if (r.status !== 200 || first?.type !== "ok") {
    throw new Error(`${text} at ${base}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  return first.response.result;
}

/** The rows of a query as plain values (integers as numbers). */
export async function rows(base: string, token: string, text: string): Promise<unknown[][]> {
  const result = await run(base, token, text);
  return result.rows.map((row: Array<{ type: string; value?: unknown }>) =>
    row.map((v) => (v.type === "integer" ? Number(v.value) : (v.value ?? null))),
  );
}

/**
 * How long a node test waits for the nodes to agree (a write at A read at B, a replica caught up).
 * A hang guard, not a speed claim: CI runs many processes on two cores, where a push that takes
 * milliseconds here can take seconds. How fast replication is belongs to `npm run bench`.
 */
export const SETTLE_MS = 15_000;

/** Retries `check` every 20 ms until it passes or `ms` have gone by. */
export async function within(ms: number, check: () => Promise<void>): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      await check();
      return Date.now() - started;
    } catch (e) {
      if (Date.now() - started > ms) throw e;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/**
 * Through node `a`: a user named `org`, their group `g` with its primary in EAST, and its database
 * `d1`. Returns the user's API token, a token for `d1` and its id.
 */
export async function userWithDatabase(
  a: ShoalProcess,
  org: string,
): Promise<{ userToken: string; token: string; dbId: string }> {
  const admin = client(a.url, ADMIN_TOKEN);
  const user = await admin.post("/v1/admin/users", { username: org, email: `${org}@example.com` });
  if (user.status !== 200) throw new Error(`user ${org}: ${user.status} ${user.text}`);
  const api = client(a.url, user.body.token);
  const group = await api.post(`/v1/organizations/${org}/groups`, { name: "g", location: EAST });
  if (group.status !== 200) throw new Error(`group g: ${group.status} ${group.text}`);
  const db = await api.post(`/v1/organizations/${org}/databases`, { name: "d1", group: "g" });
  if (db.status !== 200) throw new Error(`database d1: ${db.status} ${db.text}`);
  const token = (await api.post(`/v1/organizations/${org}/databases/d1/auth/tokens`)).body.jwt;
  return { userToken: user.body.token, token, dbId: db.body.database.DbId };
}
