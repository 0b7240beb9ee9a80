/**
 * The servers of the many-database benchmark (`shards.ts`), each a process of its own: Shoal
 * (`src/main.ts`, at a chosen `SHOAL_WORKERS`) and the bare baseline (`bare-server.ts`, one
 * process or a cluster), with the 64 databases they serve made alike.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import Database from "libsql";
import { pinned } from "./harness.js";

const ROOT = path.resolve(import.meta.dirname, "..");
export const ADMIN = "bench-admin-token-0123456789";
export const ROWS = 10_000;
export const dbName = (i: number) => `db-${String(i).padStart(2, "0")}`;

export interface Server {
  url: string;
  /** The processes that serve, whose CPU the benchmark reads. */
  pids: number[];
  stop(): Promise<void>;
}

/** A process and its descendants (a node and its shards), from Linux's /proc; just the one elsewhere. */
export function processTree(pid: number): number[] {
  const parent = new Map<number, number>();
  try {
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const stat = readFileSync(`/proc/${name}/stat`, "utf8");
        parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      } catch {
        // Ended meanwhile.
      }
    }
  } catch {
    return [pid];
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [child, p] of parent) if (p === tree[i]) tree.push(child);
  return tree;
}

/** Builds dist/ if a source changed since the last build, as `npm start` does. */
export async function ensureBuilt(): Promise<void> {
  const { buildIfStale } = (await import(path.join(ROOT, "scripts", "build.mjs"))) as {
    buildIfStale(announce?: boolean): boolean;
  };
  if (!buildIfStale(true)) throw new Error("the build failed (see above)");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function stopper(proc: ChildProcess): () => Promise<void> {
  return async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => proc.once("exit", () => r()));
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };
}

/**
 * Shoal on `dataDir` with `SHOAL_WORKERS=workers`, logging warnings only (at `info` every request
 * is a log line, which is not what is measured here), ready once `/health/ready` answers.
 */
export async function startShoalProcess(
  dataDir: string,
  workers: number,
  cpus?: string,
  /** More settings for the node (`SHOAL_*`). */
  env: Record<string, string> = {},
): Promise<Server> {
  const port = await freePort();
  // The built server, as `npm start` runs it: run from the sources, TypeScript's loader would take
  // its own share of the CPU measured (see `ensureBuilt`). Its shards inherit its cores.
  const [cmd, args] = pinned(cpus, process.execPath, ["dist/main.js"]);
  const proc = spawn(cmd, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      SHOAL_DATA_DIR: dataDir,
      SHOAL_PORT: String(port),
      SHOAL_ADMIN_TOKEN: ADMIN,
      SHOAL_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn",
      SHOAL_LOCATIONS: "aws-us-east-1",
      SHOAL_WORKERS: String(workers),
      ...env,
    },
    stdio: ["ignore", process.env.BENCH_LOG_LEVEL ? "inherit" : "ignore", "pipe"],
  });
  let stderr = "";
  proc.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`shoal exited with ${proc.exitCode}:\n${stderr}`);
    const ok = await fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`shoal did not get ready:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  // The node and its shard processes: all of them serve.
  return { url, pids: processTree(proc.pid!), stop: stopper(proc) };
}

/** POSTs JSON with a bearer token; throws on any status but 2xx. */
export async function post(url: string, token: string, body?: unknown): Promise<Record<string, any>> {
  const r = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Record<string, any>;
}

const SCHEMA =
  "CREATE TABLE kv (id INTEGER PRIMARY KEY, v TEXT); CREATE TABLE log (id INTEGER PRIMARY KEY, v TEXT)";

/**
 * Makes `count` databases on a running Shoal through its APIs, each with `ROWS` rows in `kv` and
 * an empty `log`; returns a group token that opens them all.
 */
export async function seedShoal(shoal: Server, count: number): Promise<string> {
  const api = (p: string, body?: unknown) => post(`${shoal.url}${p}`, ADMIN, body);
  await api("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" });
  for (let i = 0; i < count; i += 8) {
    const batch = Array.from({ length: Math.min(8, count - i) }, (_, k) => dbName(i + k));
    await Promise.all(
      batch.map((name) => api("/v1/organizations/admin/databases", { name, group: "default" })),
    );
  }
  const jwt = (await api("/v1/organizations/admin/groups/default/auth/tokens")).jwt as string;
  const execute = (sql: string) => ({ type: "execute", stmt: { sql } });
  for (let i = 0; i < count; i++) {
    await post(`${shoal.url}/db/admin/${dbName(i)}/v2/pipeline`, jwt, {
      requests: [
        ...SCHEMA.split("; ").map(execute),
        execute(`INSERT INTO kv SELECT value, 'value-' || value FROM generate_series(1, ${ROWS})`),
        { type: "close" },
      ],
    });
  }
  return jwt;
}

/** The same `count` databases as plain files `<dir>/<name>.db`, for the bare baseline. */
export async function seedFiles(dir: string, count: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < count; i++) {
    const db = new Database(path.join(dir, `${dbName(i)}.db`));
    db.exec("PRAGMA journal_mode = WAL");
    db.exec(SCHEMA);
    db.exec(`INSERT INTO kv SELECT value, 'value-' || value FROM generate_series(1, ${ROWS})`);
    db.close();
  }
}

/** The bare baseline over `dir`'s files: one process, or a cluster of `processes`. */
export async function startBare(dir: string, processes: number, cpus?: string): Promise<Server> {
  const [cmd, args] = pinned(cpus, process.execPath, [
    "--import",
    "tsx",
    path.join(ROOT, "bench/bare-server.ts"),
    JSON.stringify({ dir, processes }),
  ]);
  const proc = spawn(cmd, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const ready = await new Promise<{ url: string; pids: number[] }>((resolve, reject) => {
    // Only its first line matters: stop listening once it is in.
    const first = (d: Buffer) => {
      out += d.toString();
      const end = out.indexOf("\n");
      if (end < 0) return;
      proc.stdout?.off("data", first);
      resolve(JSON.parse(out.slice(0, end)));
    };
    proc.stdout?.on("data", first);
    proc.once("exit", (code) => reject(new Error(`the bare server exited with ${code}:\n${err}`)));
  });
  return { ...ready, stop: stopper(proc) };
}
