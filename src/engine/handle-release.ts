import v8 from "node:v8";
import vm from "node:vm";
import type Database from "libsql";

/**
 * Closing `libsql` connections without leaking file descriptors.
 *
 * The driver's prepared statements keep their native connection alive. Closing a connection while
 * some of its statements are still reachable leaves a "zombie" that holds its descriptors, and when
 * the same file is opened again meanwhile, SQLite parks the zombie's descriptor on the file's
 * shared list, where (measured) it is never released: a pool that closes and reopens databases
 * would leak descriptors steadily. So a connection is closed only after its statements are gone:
 * the caller drops every reference, a collection runs, and the close happens on the next turn of
 * the event loop, once the statements' native finalizers have run.
 *
 * `gc` is exposed at run time rather than by a command-line flag, so every way of starting Shoal
 * (npm start, tsx, tests) gets it.
 */
let gc: ((opts?: { type: "major" | "minor" }) => void) | undefined;
try {
  v8.setFlagsFromString("--expose_gc");
  gc = vm.runInNewContext("gc") as typeof gc;
} catch {
  gc = undefined;
}

let pending: Database.Database[] = [];
let scheduled: NodeJS.Timeout | undefined;

/** Closes `db` once nothing can reference its statements; the caller must have dropped its own. */
export function closeWhenUnreferenced(db: Database.Database, delayMs = 20): void {
  if (!gc) {
    db.close();
    return;
  }
  pending.push(db);
  if (scheduled) return;
  scheduled = setTimeout(() => void flushClosing(), delayMs);
  scheduled.unref();
}

/** Closes every connection waiting to be closed (also called at shutdown). */
export async function flushClosing(): Promise<void> {
  if (scheduled) clearTimeout(scheduled);
  scheduled = undefined;
  const batch = pending;
  pending = [];
  if (batch.length === 0) return;
  // A plain gc() is precise (see sweepStatements): with options V8 may keep the statements.
  gc?.();
  await new Promise<void>((resolve) => setImmediate(resolve));
  for (const db of batch) {
    try {
      db.close();
    } catch {
      // Already closed: nothing left to release.
    }
  }
}

/**
 * Statements let go of are finalized only by the garbage collector, on a later turn of the event
 * loop: the driver has no way to finalize one. Until then SQLite keeps each on its connection:
 * memory, and a row that every read of `sqlite_stmt` (the scan counter) walks. Connections keep
 * the statements they let go of and sweep now and then (see EngineConnection.sweep), which calls
 * this: a full collection, then a turn of the event loop for the finalizers to run.
 */
let sweeping: Promise<void> | undefined;

/** Collects unreferenced statements and yields so their finalizers run. Concurrent callers share one sweep. */
export function sweepStatements(): Promise<void> {
  sweeping ??= (async () => {
    // A plain gc() is a precise full collection; with options V8 may treat the stack as holding
    // references and keep the statements (measured under tsx and vitest).
    gc?.();
    await new Promise<void>((resolve) => setImmediate(resolve));
    sweeping = undefined;
  })();
  return sweeping;
}
