import type { BatchOutcome } from "./stream.js";
import { encodeValue } from "./values.js";

/**
 * A batch's outcome as Hrana 3 cursor entries: for each executed step a `step_begin`, its `row`s
 * and a `step_end`, or a `step_error`; skipped steps produce nothing. HTTP sends them one JSON text
 * per line (`v3/cursor`); WebSocket hands them out in pages (`fetch_cursor`).
 */
export function batchCursorEntries(outcome: BatchOutcome): Array<Record<string, unknown>> {
  const entries: Array<Record<string, unknown>> = [];
  outcome.results.forEach((r, step) => {
    const error = outcome.errors[step];
    if (error) {
      entries.push({ type: "step_error", step, error: error.toJSON() });
      return;
    }
    if (!r) return;
    entries.push({ type: "step_begin", step, cols: r.columns });
    for (const row of r.rows) entries.push({ type: "row", row: row.map(encodeValue) });
    entries.push({
      type: "step_end",
      affected_row_count: r.affectedRowCount,
      last_insert_rowid: r.lastInsertRowid === null ? null : r.lastInsertRowid.toString(),
      rows_read: r.rowsRead,
      rows_written: r.rowsWritten,
      query_duration_ms: Math.round(r.durationMs * 1000) / 1000,
    });
  });
  return entries;
}
