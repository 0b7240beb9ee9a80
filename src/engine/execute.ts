import { availableParallelism } from "node:os";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import type Database from "libsql";
import { AsyncGate } from "./async-gate.js";
import { interrupt, type NativeRows, nextRows, startRows, startRowsAsync } from "./driver.js";
import type { SqlValue } from "./sql-value.js";
import {
  isInterrupt,
  isOutOfMemory,
  ResponseTooLargeError,
  StatementCancelledError,
  StatementTimeoutError,
} from "./sqlite-errors.js";

/** Where a statement's rows are counted as they arrive: `take` throws to stop the statement. */
export interface RowBudget {
  take(bytes: number): void;
}

export interface ExecutionLimits {
  /** Statements that may run long are interrupted after this many milliseconds. */
  statementTimeoutMs: number;
  /** Admission to the driver's thread pool (see AsyncGate). */
  gate: AsyncGate;
  /** SQLite's heap limit, for the message when a value runs into it. */
  heapLimitBytes: number;
}

/** The settings' defaults: 5 s, a gate as wide as the driver's thread pool (one per core), 256 MiB. */
export function defaultLimits(): ExecutionLimits {
  return {
    statementTimeoutMs: 5000,
    gate: new AsyncGate(availableParallelism()),
    heapLimitBytes: 256 * 1024 * 1024,
  };
}

/** What running a statement gave: the rows kept, and how many were fetched in all. */
export interface Ran {
  rows: SqlValue[][];
  fetched: number;
}

export interface RunRequest {
  stmt: Database.Statement;
  params: unknown;
  reader: boolean;
  wantRows: boolean;
  budget: RowBudget | undefined;
}

/** How long rows are fetched on the event loop before other work gets a turn. */
const SLICE_MS = 4;

/**
 * Runs a statement whose program is bounded (see statement-program.ts) at once, on this thread.
 * Rows are fetched a few at a time and counted against the budget as they come, so a response
 * that grows too large stops without its rest ever being read.
 */
export function runBounded(db: Database.Database, r: RunRequest, limits: ExecutionLimits): Ran {
  const rows = guarded(() => startRows(r.stmt, r.params), r.reader, limits);
  const ran: Ran = { rows: [], fetched: 0 };
  collectSlice(db, rows, r, limits, ran, Number.POSITIVE_INFINITY);
  return ran;
}

/**
 * Runs any other statement with its first step on the driver's thread pool, admitted by the gate,
 * and interrupted when it outlasts the time limit. Readers that can be are run materialized (see
 * `materialize`), so all their work happens in that first step; what follows only reads rows
 * already made, a slice at a time, giving the event loop a turn between slices.
 */
export async function runUnbounded(
  db: Database.Database,
  key: string,
  r: RunRequest,
  limits: ExecutionLimits,
  cancel: { interrupted: boolean },
): Promise<Ran> {
  const release = await limits.gate.acquire(key);
  if (cancel.interrupted) {
    release();
    throw new StatementCancelledError();
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    interrupt(db);
  }, limits.statementTimeoutMs);
  const inTransaction = db.inTransaction;
  try {
    let rows: NativeRows;
    try {
      rows = await startRowsAsync(r.stmt, r.params);
    } finally {
      release();
    }
    if (cancel.interrupted) {
      abandon(db, rows);
      throw new StatementCancelledError();
    }
    const ran: Ran = { rows: [], fetched: 0 };
    for (;;) {
      const started = performance.now();
      const done = collectSlice(db, rows, r, limits, ran, started + SLICE_MS);
      if (done) return ran;
      await yieldToLoop();
    }
  } catch (e) {
    if (timedOut && isInterrupt(e))
      throw new StatementTimeoutError(limits.statementTimeoutMs, inTransaction && !db.inTransaction);
    if (cancel.interrupted && isInterrupt(e)) throw new StatementCancelledError();
    throw readerOutOfMemory(e, r.reader, limits) ?? e;
  } finally {
    clearTimeout(timer);
  }
}

/** Fetches rows until the statement is done (true) or `until` passes (false). */
function collectSlice(
  db: Database.Database,
  rows: NativeRows,
  r: RunRequest,
  limits: ExecutionLimits,
  ran: Ran,
  until: number,
): boolean {
  if (!r.reader) {
    // SQLite's answer to the first step (done, or an error) is given by the first fetch.
    guarded(() => nextRows(rows, 1), false, limits);
    return true;
  }
  let bytes = 0;
  for (;;) {
    // Small rows come many per call (a call costs more than a row); large ones a few at a time,
    // so memory holds a few large values, not a hundred.
    const want = ran.fetched > 0 && bytes / ran.fetched > 4096 ? 4 : 64;
    const batch = guarded(() => nextRows(rows, want), r.reader, limits) as SqlValue[][];
    for (const row of batch) {
      ran.fetched++;
      const size = rowBytes(row);
      bytes += size;
      if (r.budget) {
        try {
          r.budget.take(size);
        } catch (e) {
          abandon(db, rows);
          throw e;
        }
      }
      if (r.wantRows) ran.rows.push(row);
    }
    if (batch.length < want) return true;
    if (performance.now() > until) return false;
  }
}

/**
 * Stops a statement that is still in progress without reading the rest: the driver can't reset a
 * statement without running it again, so it is interrupted and stepped once, which ends it. An
 * in-progress statement would keep its read snapshot (and so block checkpoints) and make the
 * connection's next COMMIT fail.
 */
function abandon(db: Database.Database, rows: NativeRows): void {
  interrupt(db);
  try {
    nextRows(rows, 1);
  } catch {
    // The interrupt it was meant to meet.
  }
}

function guarded<T>(fn: () => T, reader: boolean, limits: ExecutionLimits): T {
  try {
    return fn();
  } catch (e) {
    throw readerOutOfMemory(e, reader, limits) ?? e;
  }
}

/**
 * SQLite refuses an allocation past the heap limit with SQLITE_NOMEM, which is how a huge value
 * (`randomblob(999999999)`) ends before it exists. For a statement that returns rows that is a
 * result too large to send.
 */
function readerOutOfMemory(e: unknown, reader: boolean, limits: ExecutionLimits): Error | undefined {
  if (!reader || !isOutOfMemory(e)) return undefined;
  const mib = Math.round(limits.heapLimitBytes / 1048576);
  return new ResponseTooLargeError(
    `a value of the result is larger than the ${mib} MiB SQLite may hold at once on this server ` +
      "(SHOAL_SQLITE_HEAP_LIMIT_MB): select less data per row",
  );
}

/** A row's size in Hrana's JSON, near enough: each value's text plus its `{"type":...}` frame. */
/**
 * `last_insert_rowid` exactly: the driver reports it as a JS number, which rounds past 2^53, so
 * above that it is asked of SQLite again (`ask`, as a bigint).
 */
export function exactRowid(reported: number | bigint, ask: () => bigint): bigint {
  if (typeof reported === "bigint") return reported;
  return Number.isSafeInteger(reported) ? BigInt(reported) : ask();
}

export function rowBytes(row: readonly SqlValue[]): number {
  let n = 2;
  for (const v of row) {
    if (v === null) n += 16;
    else if (typeof v === "string") n += 32 + (v.length < 256 ? v.length : Buffer.byteLength(v));
    else if (typeof v === "bigint" || typeof v === "number") n += 48;
    else n += 32 + Math.ceil(v.byteLength / 3) * 4;
  }
  return n;
}

/**
 * The driver leaves an EXPLAIN statement "in progress" after reading all its rows (other
 * statements are reset), and an in-progress statement makes the connection's next COMMIT fail with
 * "SQL statements in progress". `get()` runs it once more and resets it; EXPLAIN does no work.
 */
export function resetExplain(stmt: Database.Statement, bound: SqlValue[] | Record<string, SqlValue>): void {
  try {
    stmt.get(bound);
  } catch {
    // Binding errors surfaced on the first run already.
  }
}
