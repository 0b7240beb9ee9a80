import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

const require = createRequire(import.meta.url);

/**
 * A libSQL embedded replica (the `libsql` package opened with a syncUrl), run in a worker thread:
 * its calls block the thread they run on, and the Shoal under test answers on this one.
 */
export interface ReplicaClient {
  open(path: string, syncUrl: string, authToken: string, opts?: Record<string, unknown>): Promise<void>;
  sync(): Promise<unknown>;
  query(sql: string, args?: unknown[]): Promise<unknown[][]>;
  run(sql: string, args?: unknown[]): Promise<unknown>;
  close(): Promise<void>;
}

const WORKER = `
const { parentPort } = require("node:worker_threads");
const Database = require(${JSON.stringify(require.resolve("libsql"))});
let db;
parentPort.on("message", ({ id, op, args }) => {
  try {
    let result;
    if (op === "open") db = new Database(args.path, { syncUrl: args.syncUrl, authToken: args.authToken, ...args.opts });
    else if (op === "sync") result = db.sync();
    else if (op === "query") result = db.prepare(args.sql).raw(true).all(args.args ?? []);
    else if (op === "run") result = db.prepare(args.sql).run(args.args ?? []);
    else if (op === "close") { db?.close(); db = undefined; }
    parentPort.postMessage({ id, ok: true, result });
  } catch (e) {
    parentPort.postMessage({ id, ok: false, error: String(e && e.message || e) });
  }
});`;

export function replicaClient(): ReplicaClient & { terminate(): Promise<number> } {
  const { worker, call } = workerRpc(WORKER);
  return {
    open: (path, syncUrl, authToken, opts) => call("open", { path, syncUrl, authToken, opts }),
    sync: () => call("sync"),
    query: (sql, args) => call("query", { sql, args }),
    run: (sql, args) => call("run", { sql, args }),
    close: () => call("close"),
    terminate: () => worker.terminate(),
  };
}

/** `@libsql/client` with a local file and a syncUrl (its embedded-replica mode), in a worker thread. */
export interface ClientReplica {
  open(config: Record<string, unknown>): Promise<void>;
  sync(): Promise<unknown>;
  execute(sql: string, args?: unknown[]): Promise<{ rows: unknown[][]; rowsAffected: number }>;
  terminate(): Promise<number>;
}

const CLIENT_WORKER = `
const { parentPort } = require("node:worker_threads");
const { createClient } = require(${JSON.stringify(require.resolve("@libsql/client"))});
let client;
parentPort.on("message", async ({ id, op, args }) => {
  try {
    let result;
    if (op === "open") client = createClient(args);
    else if (op === "sync") result = await client.sync();
    else if (op === "execute") {
      const rs = await client.execute({ sql: args.sql, args: args.args ?? [] });
      result = { rows: rs.rows.map((r) => Array.from(r)), rowsAffected: rs.rowsAffected };
    }
    parentPort.postMessage({ id, ok: true, result });
  } catch (e) {
    parentPort.postMessage({ id, ok: false, error: String(e && e.message || e) });
  }
});`;

export function clientReplica(): ClientReplica {
  const { worker, call } = workerRpc(CLIENT_WORKER);
  return {
    open: (config) => call("open", config),
    sync: () => call("sync"),
    execute: (sql, args) => call("execute", { sql, args }),
    terminate: () => worker.terminate(),
  };
}

/** Runs `source` in a worker thread and calls it by message: `{id, op, args}` in, `{id, ok, result | error}` out. */
function workerRpc(source: string) {
  const worker = new Worker(source, { eval: true });
  let next = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  worker.on("message", (m: { id: number; ok: boolean; result?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.ok) p?.resolve(m.result);
    else p?.reject(new Error(m.error));
  });
  const call = (op: string, args?: unknown) =>
    new Promise<any>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, op, args });
    });
  return { worker, call };
}
