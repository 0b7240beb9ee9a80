import type { HranaValue, StatementResult } from "../hrana.js";
import { renderTable } from "../output.js";

export type Mode = "table" | "json" | "csv";
export const MODES: readonly Mode[] = ["table", "json", "csv"];

/** A value as text, for tables and CSV: blobs in SQL's X'..' notation, NULL as the word. */
export function textOf(v: HranaValue, nullText: string): string {
  switch (v.type) {
    case "null":
      return nullText;
    case "integer":
    case "text":
      return v.value;
    case "float":
      return String(v.value);
    case "blob":
      return `X'${Buffer.from(v.base64, "base64").toString("hex").toUpperCase()}'`;
  }
}

/**
 * A value in JSON output: integers as numbers while they fit exactly (as strings beyond 2^53),
 * blobs as base64 text.
 */
export function jsonOf(v: HranaValue): unknown {
  switch (v.type) {
    case "null":
      return null;
    case "integer": {
      const n = Number(v.value);
      return Number.isSafeInteger(n) ? n : v.value;
    }
    case "float":
      return v.value;
    case "text":
      return v.value;
    case "blob":
      // Servers may leave the padding out; scripts get the standard form.
      return Buffer.from(v.base64, "base64").toString("base64");
  }
}

function columnNames(r: StatementResult): string[] {
  return r.cols.map((c, i) => c.name ?? `column${i + 1}`);
}

function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The rows of one statement in the shell's output mode; nothing for a statement without columns.
 * `headers` off (`.headers off`) leaves out the column names of a table or CSV.
 */
export function formatResult(r: StatementResult, mode: Mode, headers = true): string {
  if (r.cols.length === 0) return "";
  const names = columnNames(r);
  if (mode === "json") {
    const rows = r.rows.map((row) => Object.fromEntries(names.map((n, i) => [n, jsonOf(row[i]!)])));
    return `${JSON.stringify(rows, null, 2)}\n`;
  }
  if (mode === "csv") {
    const lines = [...(headers ? [names] : []), ...r.rows.map((row) => row.map((v) => textOf(v, "")))];
    return lines.map((l) => `${l.map(csvField).join(",")}\r\n`).join("");
  }
  return renderTable(
    names,
    r.rows.map((row) => row.map((v) => textOf(v, "NULL"))),
    { upper: false, headers },
  );
}
