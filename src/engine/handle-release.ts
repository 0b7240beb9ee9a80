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
  gc?.({ type: "major" });
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
 * Statements dropped and not yet finalized. The driver has no way to finalize a statement: that
 * happens when the garbage collector takes the statement's object, and only on a later turn of the
 * event loop. Until then SQLite keeps the statement on its connection: memory, and a row that
 * every read of `sqlite_stmt` (the scan counter, read around statements that scan) walks. A batch
 * of thousands of distinct statements runs without yielding, so none would be finalized before it
 * ends and each scanning statement would cost more than the last. Callers that run statements in
 * a loop sweep when `sweepDue` says so: rarely in general (a full collection costs tens of
 * milliseconds; 4,096 simple statements hold a few megabytes), and sooner before a statement that
 * reads the scan counter, whose cost grows with every statement alive.
 */
const SWEEP_AFTER = 4096;
const SWEEP_BEFORE_SCAN_AFTER = 128;
let dropped = 0;
let sweeping: Promise<void> | undefined;

/** Counts statements a connection let go of (evicted from its cache, or helpers). */
export function statementsDropped(n = 1): void {
  dropped += n;
}

/** Whether the caller should sweep before running its next statement (`scans`: one that reads the scan counter). */
export function sweepDue(scans = false): boolean {
  return gc !== undefined && dropped >= (scans ? SWEEP_BEFORE_SCAN_AFTER : SWEEP_AFTER);
}

/** Collects dropped statements and yields so their finalizers run. Concurrent callers share one sweep. */
export function sweepStatements(): Promise<void> {
  sweeping ??= (async () => {
    dropped = 0;
    // A plain gc() is a precise full collection; with options V8 may treat the stack as holding
    // references and keep the statements (measured under tsx and vitest).
    gc?.();
    await new Promise<void>((resolve) => setImmediate(resolve));
    sweeping = undefined;
  })();
  return sweeping;
}
