import type { ResponseBudget } from "./response-budget.js";
import type { BatchOutcome } from "./stream.js";
import { encodeValue } from "./values.js";

/**
 * A batch's outcome as Hrana 3 cursor entries: for each executed step a `step_begin`, its `row`s
 * and a `step_end`, or a `step_error`; skipped steps produce nothing. HTTP writes them one JSON
 * text per line (`v3/cursor`) as the client reads them; WebSocket hands them out in pages
 * (`fetch_cursor`). Each row is encoded only when its entry is taken.
 */
export function* batchCursorEntries(outcome: BatchOutcome): Generator<Record<string, unknown>> {
  for (let step = 0; step < outcome.results.length; step++) {
    const r = outcome.results[step];
    const error = outcome.errors[step];
    if (error) {
      yield { type: "step_error", step, error: error.toJSON() };
      continue;
    }
    if (!r) continue;
    yield { type: "step_begin", step, cols: r.columns };
    for (const row of r.rows) yield { type: "row", row: row.map(encodeValue) };
    yield {
      type: "step_end",
      affected_row_count: r.affectedRowCount,
      last_insert_rowid: r.lastInsertRowid === null ? null : r.lastInsertRowid.toString(),
      rows_read: r.rowsRead,
      rows_written: r.rowsWritten,
      query_duration_ms: Math.round(r.durationMs * 1000) / 1000,
    };
  }
}

/** An open cursor: its entries are made (and their rows encoded) as they are fetched. */
export interface Cursor {
  streamId: number;
  entries: Iterator<Record<string, unknown>> | undefined;
  /** The entry taken past the last page, to know whether more follow. */
  next: IteratorResult<Record<string, unknown>> | undefined;
  budget: ResponseBudget;
  ready: Promise<void>;
}

/** Up to `max` entries of a cursor, keeping the one after them to tell whether more follow. */
export function takeEntries(cursor: Cursor, max: number): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  if (!cursor.entries) return out;
  let next = cursor.next ?? cursor.entries.next();
  while (!next.done && out.length < max) {
    out.push(next.value);
    next = cursor.entries.next();
  }
  cursor.next = next;
  return out;
}
