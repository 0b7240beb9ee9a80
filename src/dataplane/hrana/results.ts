import type { ExecResult } from "../../engine/connection.js";
import type { HranaError } from "./errors.js";
import { RowsJson } from "./json-pieces.js";
import type { BatchOutcome } from "./stream.js";

export interface StmtResultJson {
  cols: Array<{ name: string; decltype: string | null }>;
  /** Encoded as Hrana values when written (see RowsJson). */
  rows: RowsJson;
  affected_row_count: number;
  last_insert_rowid: string | null;
  replication_index: string | null;
  rows_read: number;
  rows_written: number;
  query_duration_ms: number;
}

/** A statement result in Hrana's JSON: every field always present, the rowid as a string. */
export function stmtResultJson(r: ExecResult): StmtResultJson {
  return {
    cols: r.columns,
    rows: new RowsJson(r.rows),
    affected_row_count: r.affectedRowCount,
    last_insert_rowid: r.lastInsertRowid === null ? null : r.lastInsertRowid.toString(),
    replication_index: null,
    rows_read: r.rowsRead,
    rows_written: r.rowsWritten,
    query_duration_ms: Math.round(r.durationMs * 1000) / 1000,
  };
}

export function batchResultJson(b: BatchOutcome): {
  step_results: Array<StmtResultJson | null>;
  step_errors: Array<ReturnType<HranaError["toJSON"]> | null>;
  replication_index: string | null;
} {
  return {
    step_results: b.results.map((r) => (r ? stmtResultJson(r) : null)),
    step_errors: b.errors.map((e) => (e ? e.toJSON() : null)),
    replication_index: null,
  };
}
