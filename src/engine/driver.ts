import { createRequire } from "node:module";
import type Database from "libsql";

/** A native statement: what the driver's `Statement` wraps as `stmt`. */
type NativeStatement = object;
/** A native result cursor (libSQL's `Rows`): the statement stays in progress until it is done. */
export type NativeRows = object;

interface Native {
  statementRowsSync(this: NativeStatement, params: unknown): NativeRows;
  statementRowsAsync(this: NativeStatement, params: unknown): Promise<NativeRows>;
  rowsNext(this: NativeRows, into: unknown[]): void;
}

let native: Native | undefined;

/**
 * The `libsql` package's native addon, for the three calls its JavaScript API doesn't offer on
 * a statement prepared synchronously: start a statement with its first step on the driver's own
 * thread pool (`statementRowsAsync`, what `libsql/promise` uses), start one on this thread, and
 * fetch a chosen number of rows per call (its iterators always fetch 100, which for large values
 * is 100 large values in memory at once). Both of the package's entry points load this same
 * addon by the same name, so handles from either work with it.
 */
function addon(): Native {
  if (native) return native;
  const fromLibsql = createRequire(createRequire(import.meta.url).resolve("libsql"));
  const target = addonTarget(fromLibsql);
  native = fromLibsql(`@libsql/${target}`) as Native;
  if (typeof native.statementRowsAsync !== "function" || typeof native.rowsNext !== "function") {
    throw new Error(`the libsql addon @libsql/${target} lacks the calls Shoal needs`);
  }
  return native;
}

/**
 * The addon's package name, as the `libsql` package names it, with the libc family from the
 * same `detect-libc` it used (resolved from its folder, so the answer is the one it cached).
 *
 * Never through `process.report.getReport()` (which `@neon-rs/load`'s `currentTarget()` calls
 * every time): a report waits for every worker thread to answer, and a worker blocked inside the
 * driver (a replica's sync, waiting on this very thread to serve it) never does, so the process
 * hung on its first long statement after a restart.
 */
function addonTarget(fromLibsql: NodeJS.Require): string {
  const { platform, arch } = process;
  if (platform === "win32") return `win32-${arch}-msvc`;
  if (platform !== "linux") return `${platform}-${arch}`;
  const libc = fromLibsql("detect-libc") as { familySync(): string | null; MUSL: string };
  const musl = libc.familySync() === libc.MUSL;
  if (arch === "arm") return musl ? "linux-arm-musleabihf" : "linux-arm-gnueabihf";
  return `linux-${arch}-${musl ? "musl" : "gnu"}`;
}

function nativeOf(stmt: Database.Statement): NativeStatement {
  return (stmt as unknown as { stmt: NativeStatement }).stmt;
}

/** A driver error in the shape the package's own wrappers give it (they aren't applied here). */
function driverError(e: unknown): unknown {
  const err = e as { libsqlError?: boolean; message: string; code?: string; rawCode?: number };
  if (err?.libsqlError) {
    const out = new Error(err.message) as Error & { code?: string; rawCode?: number };
    out.name = "SqliteError";
    out.code = err.code;
    out.rawCode = err.rawCode;
    return out;
  }
  return e;
}

/** Starts a statement on this thread: its first step runs now. */
export function startRows(stmt: Database.Statement, params: unknown): NativeRows {
  try {
    return addon().statementRowsSync.call(nativeOf(stmt), params);
  } catch (e) {
    throw driverError(e);
  }
}

/**
 * Starts a statement with its first step on the driver's thread pool: this thread goes on
 * serving while it runs, and the connection's `interrupt()` stops it. Nothing else may use the
 * connection until the promise settles.
 */
export async function startRowsAsync(stmt: Database.Statement, params: unknown): Promise<NativeRows> {
  try {
    return await addon().statementRowsAsync.call(nativeOf(stmt), params);
  } catch (e) {
    throw driverError(e);
  }
}

/** Up to `max` more rows of a started statement; fewer means it is done. */
export function nextRows(rows: NativeRows, max: number): unknown[][] {
  const into: unknown[] = new Array(max).fill(null);
  try {
    addon().rowsNext.call(rows, into);
  } catch (e) {
    throw driverError(e);
  }
  const end = into.indexOf(null);
  return (end < 0 ? into : into.slice(0, end)) as unknown[][];
}

/** Interrupts whatever runs on a connection (`sqlite3_interrupt`); the driver's types omit it. */
export function interrupt(db: Database.Database): void {
  (db as unknown as { interrupt(): void }).interrupt();
}
