import { type Output, write } from "./io.js";

export type Cell = string | number | boolean | null | undefined;

/** Display width of a string: wide (CJK, emoji) characters take two columns, combining marks none. */
export function widthOf(text: string): number {
  let w = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (/\p{Mark}/u.test(ch) || cp === 0x200d) continue;
    w +=
      /\p{Extended_Pictographic}|[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60\uffe0-\uffe6]/u.test(
        ch,
      )
        ? 2
        : 1;
  }
  return w;
}

function cellText(c: Cell): string {
  if (c === null || c === undefined) return "";
  return String(c).replace(/[\r\n\t]/g, " ");
}

/**
 * A table as the user reads it: a header row (in capitals unless `upper` is false: SQL column
 * names keep their case; none when `headers` is false), columns separated by two spaces, as the
 * turso CLI prints them.
 */
export function renderTable(
  headers: string[],
  rows: Cell[][],
  opts: { upper?: boolean; headers?: boolean } = {},
): string {
  const shown = opts.headers !== false;
  const texts = rows.map((r) => headers.map((_, i) => cellText(r[i])));
  const widths = headers.map((h, i) => Math.max(shown ? widthOf(h) : 0, ...texts.map((r) => widthOf(r[i]!))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + " ".repeat(widths[i]! - widthOf(c))))
      .join("  ")
      .trimEnd();
  // SQL column names keep their case, so a rule marks where the header ends.
  const head = !shown
    ? []
    : opts.upper === false
      ? [line(headers), line(widths.map((w) => "-".repeat(w)))]
      : [line(headers.map((h) => h.toUpperCase()))];
  return [...head, ...texts.map(line)].map((l) => `${l}\n`).join("");
}

/** JSON for scripts: two-space indented, one value, a final newline. */
export function renderJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Prints `value` as JSON with `--json`, otherwise what `human` renders. */
export async function emit(
  out: Output,
  json: boolean | undefined,
  value: unknown,
  human: () => string,
): Promise<void> {
  await write(out, json ? renderJson(value) : human());
}

/** A size as a person reads it: `512 B`, `1.5 KiB`, `12.0 MiB`. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = bytes / 1024;
  let i = 0;
  for (; v >= 1024 && i < units.length - 1; i++) v /= 1024;
  return `${v.toFixed(1)} ${units[i]}`;
}
