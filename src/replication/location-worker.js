// @ts-check
/**
 * The replicas of one location, in their own thread. Each replica is a libSQL embedded replica:
 * the `libsql` package opened with a syncUrl pointing at the primary, so the replica is built and
 * kept current by libSQL's own sync client. It runs in a worker because opening a replica makes a
 * blocking request to the primary, which (on one node) answers on the main thread.
 *
 * Messages in: { id, op, ... } with op register | open | sync | query | drop | release | close-all.
 * Messages out: { id, ok: true, result } or { id, ok: false, error }.
 *
 * It uses the driver's synchronous API: the promise API of libsql 0.5.29 passes its arguments to
 * the native open shifted by one when a syncUrl is given, and can't open a replica at all. A
 * blocking call only holds up this location's thread.
 *
 * Plain JavaScript, type-checked: a worker thread must load without a TypeScript loader.
 */
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { parentPort, workerData } from "node:worker_threads";
import Database from "libsql";

/**
 * The driver's prepared statements keep their native connection alive after `close()` until they
 * are collected (see engine/handle-release.ts). A replica closed that way, and then promoted to a
 * primary that another process serves, would be closed for real at some later collection: SQLite,
 * finding itself the last user of the old shared-memory file, checkpoints and deletes the WAL by
 * name, the primary's live one. So a close collects first, then closes.
 * @type {(() => void) | undefined}
 */
let gc;
try {
  v8.setFlagsFromString("--expose_gc");
  gc = vm.runInNewContext("gc");
} catch {
  gc = undefined;
}

/** @typedef {{ db: any; used: number; offline?: string }} Replica `offline`: why the primary was out of reach */

/** Replicas open at once; the least recently used close first (their files stay). */
const MAX_OPEN = Number(workerData?.maxOpen ?? 256);

/** @type {Map<string, Replica>} */
const open = new Map();
/** @type {Map<string, { path: string; syncUrl: string; token: string }>} */
const known = new Map();

const COMPANIONS = ["", "-wal", "-shm", "-info", "-client_wal_index"];

/** @param {string} key */
function replica(key) {
  const hit = open.get(key);
  if (hit) {
    hit.used = Date.now();
    return hit;
  }
  const spec = known.get(key);
  if (!spec) throw new Error(`no replica ${key} in this location`);
  // Blocks this thread while it bootstraps (GET /info, /export) or reconnects; that is why it is here.
  mkdirSync(dirname(spec.path), { recursive: true });
  // A replica whose file is gone but whose sync metadata remains can't be reopened: start afresh.
  if (!existsSync(spec.path)) for (const s of COMPANIONS) rmSync(spec.path + s, { force: true });
  // `authToken` and `readYourWrites` are options of this driver version its type declarations omit.
  /** @type {any} */
  const options = { syncUrl: spec.syncUrl, authToken: spec.token, readYourWrites: false };
  /** @type {Replica} */
  let r;
  try {
    r = { db: new Database(spec.path, options), used: Date.now() };
  } catch (e) {
    // Opening with a syncUrl reaches the primary. Out of reach, a replica that has its file and
    // its position (one seeded from the backup bucket, or built earlier) still serves reads from
    // its file; the next sync opens it with the primary again.
    if (!existsSync(spec.path) || !existsSync(`${spec.path}-info`)) throw e;
    const why = e instanceof Error ? e.message : String(e);
    r = { db: new Database(spec.path), used: Date.now(), offline: `${why}, from ${spec.syncUrl}` };
  }
  open.set(key, r);
  if (open.size > MAX_OPEN) {
    const [oldestKey] = [...open.entries()].sort((a, b) => a[1].used - b[1].used)[0] ?? [];
    if (oldestKey && oldestKey !== key) void close(oldestKey);
  }
  return r;
}

/**
 * Closes a replica once its statements are collected; resolves when its files are let go of.
 * @param {string} key
 */
async function close(key) {
  const r = open.get(key);
  if (!r) return;
  open.delete(key);
  gc?.();
  // The statements' native finalizers run on a later turn.
  await new Promise((resolve) => setImmediate(resolve));
  try {
    r.db.close();
  } catch {
    // Already closed.
  }
}

/**
 * Pulls everything the primary has. Calls are handled one at a time in this thread, so requests
 * that pile up during a sync simply run after it (and find little left to pull).
 * @param {string} key
 */
async function sync(key) {
  if (open.get(key)?.offline) await close(key);
  const r = replica(key);
  if (r.offline) {
    throw new Error(
      `sync error: the primary can't be reached (${r.offline}); serving the replica's own state`,
    );
  }
  r.db.sync();
}

/**
 * A read on the replica: rows as arrays, integers as bigints.
 * @param {string} key @param {string} sql @param {unknown} args
 */
function query(key, sql, args) {
  const r = replica(key);
  const stmt = r.db.prepare(sql);
  const columns = stmt
    .columns()
    .map((/** @type {{ name: string; type: string | null }} */ c) => ({ name: c.name, decltype: c.type }));
  if (!stmt.reader) {
    throw Object.assign(new Error("only reads run on a replica"), { code: "REPLICA_READ_ONLY" });
  }
  stmt.raw(true);
  stmt.safeIntegers(true);
  const started = performance.now();
  const rows = stmt.all(args);
  return { columns, rows, durationMs: performance.now() - started };
}

/** @param {{ id: number; op: string; [k: string]: any }} m */
async function handle(m) {
  switch (m.op) {
    case "register":
      // Its primary moved: the next use opens the replica again, following the new address.
      if (known.get(m.key)?.syncUrl !== m.syncUrl) await close(m.key);
      known.set(m.key, { path: m.path, syncUrl: m.syncUrl, token: m.token });
      return null;
    case "open":
      known.set(m.key, { path: m.path, syncUrl: m.syncUrl, token: m.token });
      await sync(m.key);
      return null;
    case "sync":
      await sync(m.key);
      return null;
    case "query":
      return query(m.key, m.sql, m.args);
    case "drop": {
      await close(m.key);
      const spec = known.get(m.key);
      known.delete(m.key);
      const path = spec?.path ?? m.path;
      if (path) for (const s of COMPANIONS) rmSync(path + s, { force: true });
      return null;
    }
    case "release":
      // The file stays (it becomes a primary's): only this worker lets go of it.
      known.delete(m.key);
      await close(m.key);
      return null;
    case "close-all":
      await Promise.all([...open.keys()].map(close));
      return null;
    default:
      throw new Error(`unknown operation ${m.op}`);
  }
}

/** Calls are handled one after another: a close waits a turn, and nothing may reopen meanwhile. */
let queue = Promise.resolve();

parentPort?.on("message", (/** @type {{ id: number; op: string }} */ m) => {
  queue = queue.then(() => respond(m));
});

/** @param {{ id: number; op: string }} m */
function respond(m) {
  return handle(m).then(
    (result) => parentPort?.postMessage({ id: m.id, ok: true, result }),
    (e) =>
      parentPort?.postMessage({
        id: m.id,
        ok: false,
        error: String(e?.message ?? e),
        code: e?.code,
        rawCode: e?.rawCode,
      }),
  );
}
