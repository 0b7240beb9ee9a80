import { describe, expect, it } from "vitest";
import { CLOSED, PipelineAnswer } from "../../src/dataplane/hrana/answer-text.js";
import { HranaError } from "../../src/dataplane/hrana/errors.js";
import { batchResultJson, stmtResultJson } from "../../src/dataplane/hrana/results.js";
import type { ExecResult, SqlValue } from "../../src/engine/connection.js";

/** A small deterministic generator (mulberry32), so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXTS = [
  "",
  "plain",
  'quote " and \\ backslash',
  "line\nbreak\ttab\u0001",
  "ünïcødé ✓ 🐟",
  "\ud800 lone",
  "</script>",
];
const NUMBERS = [0, -0, 1.5, -2.25, 1e300, -1e-300, Number.MAX_SAFE_INTEGER, Infinity, -Infinity, 0.1 + 0.2];
const INTEGERS = [0n, 1n, -1n, 9223372036854775807n, -9223372036854775808n, 42n];

function value(next: () => number): SqlValue {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  switch (Math.floor(next() * 5)) {
    case 0:
      return null;
    case 1:
      return pick(INTEGERS);
    case 2:
      return pick(NUMBERS);
    case 3:
      return pick(TEXTS);
    default:
      return new Uint8Array(Array.from({ length: Math.floor(next() * 7) }, () => Math.floor(next() * 256)));
  }
}

/** Column lists shared by results, as a prepared statement gives each of its results the same one. */
const SHARED_COLUMNS = [
  [],
  [{ name: "v", decltype: "TEXT" }],
  [
    { name: 'a "quoted" name', decltype: null },
    { name: "ünï", decltype: "BLOB" },
  ],
];

function execResult(next: () => number): ExecResult {
  const width = Math.floor(next() * 4);
  const columns =
    next() < 0.5
      ? SHARED_COLUMNS[Math.floor(next() * SHARED_COLUMNS.length)]!
      : Array.from({ length: width }, (_, i) => ({
          name: TEXTS[Math.floor(next() * TEXTS.length)]! + i,
          decltype: next() < 0.3 ? null : "TEXT",
        }));
  return {
    columns,
    rows: Array.from({ length: Math.floor(next() * 4) }, () => columns.map(() => value(next))),
    affectedRowCount: Math.floor(next() * 1000),
    lastInsertRowid: next() < 0.5 ? null : INTEGERS[Math.floor(next() * INTEGERS.length)]!,
    rowsRead: Math.floor(next() * 100),
    rowsWritten: Math.floor(next() * 100),
    durationMs: next() * 10,
  };
}

/** A pipeline's results as dispatch and the pipeline build them: executes, closes, errors, a batch. */
function results(next: () => number): unknown[] {
  return Array.from({ length: Math.floor(next() * 5) }, () => {
    const kind = Math.floor(next() * 5);
    if (kind <= 1)
      return { type: "ok", response: { type: "execute", result: stmtResultJson(execResult(next)) } };
    if (kind === 2) return { type: "ok", response: next() < 0.5 ? CLOSED : { type: "close" } };
    if (kind === 3)
      return { type: "error", error: new HranaError("SQLITE_ERROR", 'no such table: t "quoted"').toJSON() };
    return {
      type: "ok",
      response: {
        type: "batch",
        result: batchResultJson({
          results: [execResult(next), undefined],
          errors: [undefined, undefined],
        } as never),
      },
    };
  });
}

describe("a pipeline's answer written by hand", () => {
  it("is byte for byte what JSON.stringify writes, for any values a statement returns", () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const next = random(seed);
      const answer = new PipelineAnswer(next() < 0.5 ? null : `baton-${seed}"`, results(next));
      expect(answer.text(), `seed ${seed}`).toBe(JSON.stringify(answer));
    }
  });

  it("is what the clients read: a point read's answer parses to Hrana's shape", () => {
    const answer = new PipelineAnswer(null, [
      {
        type: "ok",
        response: {
          type: "execute",
          result: stmtResultJson({
            columns: [{ name: "v", decltype: "TEXT" }],
            rows: [["value-1"]],
            affectedRowCount: 0,
            lastInsertRowid: null,
            rowsRead: 1,
            rowsWritten: 0,
            durationMs: 0.0123,
          }),
        },
      },
      { type: "ok", response: CLOSED },
    ]);
    expect(JSON.parse(answer.text())).toEqual({
      baton: null,
      base_url: null,
      results: [
        {
          type: "ok",
          response: {
            type: "execute",
            result: {
              cols: [{ name: "v", decltype: "TEXT" }],
              rows: [[{ type: "text", value: "value-1" }]],
              affected_row_count: 0,
              last_insert_rowid: null,
              replication_index: null,
              rows_read: 1,
              rows_written: 0,
              query_duration_ms: 0.012,
            },
          },
        },
        { type: "ok", response: { type: "close" } },
      ],
    });
  });
});
