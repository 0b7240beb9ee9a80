import type { SqlValue } from "../../engine/connection.js";
import { RowsJson } from "./json-pieces.js";
import type { StmtResultJson } from "./results.js";
import { encodeValue } from "./values.js";

const json = JSON.stringify;

/**
 * A pipeline's answer (`v2/pipeline`, `v3/pipeline`). A small one, what nearly every SQL request
 * gets, is written by `text()`: the bytes JSON.stringify would write (a test holds it to that)
 * for about a quarter of the CPU, as statement results are written out directly rather than
 * through `toJSON` and an object per value. A large one is written in pieces from its fields,
 * like any other value (json-pieces.ts). The fields are declared in the order they are written.
 */
export class PipelineAnswer {
  readonly baton: string | null;
  readonly base_url: null;
  readonly results: unknown[];

  constructor(baton: string | null, results: unknown[]) {
    this.baton = baton;
    this.base_url = null;
    this.results = results;
  }

  text(): string {
    let s = `{"baton":${this.baton === null ? "null" : json(this.baton)},"base_url":null,"results":[`;
    for (let i = 0; i < this.results.length; i++) {
      if (i > 0) s += ",";
      s += resultText(this.results[i]);
    }
    return `${s}]}`;
  }
}

/** What a `close` request answers: one object, so an answer can tell it by identity. */
export const CLOSED: Readonly<{ type: "close" }> = Object.freeze({ type: "close" });

/** Column lists written before, by the array a prepared statement gives every result it runs. */
const colsTexts = new WeakMap<object, string>();

/** One result of a pipeline: an `execute` or `close` that succeeded is written by hand, anything else as usual. */
function resultText(entry: unknown): string {
  const e = entry as { type?: unknown; response?: { type?: unknown; result?: StmtResultJson } };
  if (e.type === "ok" && e.response === CLOSED) return '{"type":"ok","response":{"type":"close"}}';
  const result = e.type === "ok" && e.response?.type === "execute" ? e.response.result : undefined;
  if (result === undefined || !(result.rows instanceof RowsJson)) return json(entry);
  return `{"type":"ok","response":{"type":"execute","result":${stmtText(result)}}}`;
}

/** A statement's result, its fields in the order `stmtResultJson` builds them. */
function stmtText(r: StmtResultJson): string {
  const rowid = r.last_insert_rowid === null ? "null" : json(r.last_insert_rowid);
  const index = r.replication_index === null ? "null" : json(r.replication_index);
  // Counts are integers, which a template writes as JSON does.
  return (
    `{"cols":${colsText(r.cols)},"rows":${rowsText(r.rows.rows)},"affected_row_count":${r.affected_row_count},` +
    `"last_insert_rowid":${rowid},"replication_index":${index},"rows_read":${r.rows_read},` +
    `"rows_written":${r.rows_written},"query_duration_ms":${json(r.query_duration_ms)}}`
  );
}

function colsText(cols: StmtResultJson["cols"]): string {
  let text = colsTexts.get(cols);
  if (text !== undefined) return text;
  text = "[";
  for (let i = 0; i < cols.length; i++) {
    const c = cols[i]!;
    text += `${i > 0 ? "," : ""}{"name":${json(c.name)},"decltype":${c.decltype === null ? "null" : json(c.decltype)}}`;
  }
  text += "]";
  colsTexts.set(cols, text);
  return text;
}

function rowsText(rows: readonly SqlValue[][]): string {
  let s = "[";
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    s += i > 0 ? ",[" : "[";
    for (let j = 0; j < row.length; j++) {
      if (j > 0) s += ",";
      s += valueText(row[j] as SqlValue);
    }
    s += "]";
  }
  return `${s}]`;
}

/** A value as `encodeValue` gives it, written out; a blob goes through it (base64 is the cost there). */
function valueText(v: SqlValue): string {
  if (v === null) return '{"type":"null"}';
  switch (typeof v) {
    case "bigint":
      return `{"type":"integer","value":"${v}"}`;
    case "number":
      return `{"type":"float","value":${json(v)}}`;
    case "string":
      return `{"type":"text","value":${json(v)}}`;
    default:
      return json(encodeValue(v));
  }
}
