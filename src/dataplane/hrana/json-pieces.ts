import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { SqlValue } from "../../engine/connection.js";
import { encodeValue } from "./values.js";

/**
 * A result's rows in a Hrana answer, encoded only when written: `JSON.stringify` encodes them
 * whole (small answers), `jsonPieces` a row at a time (large ones), so a large answer never
 * exists twice in memory, as rows and as encoded values.
 */
export class RowsJson {
  constructor(readonly rows: readonly SqlValue[][]) {}

  toJSON(): unknown[] {
    return this.rows.map((row) => row.map(encodeValue));
  }
}

/** Whether `v` is walked into by `jsonPieces` rather than written whole. */
function walked(v: unknown): boolean {
  if (v instanceof RowsJson) return true;
  if (typeof v !== "object" || v === null) return false;
  if (Array.isArray(v)) return v.some(walked);
  return typeof (v as { toJSON?: unknown }).toJSON !== "function" && Object.values(v).some(walked);
}

/**
 * The JSON text of `value`, in pieces, as `JSON.stringify` would write it: the rows of a
 * `RowsJson` give a piece each, and the objects and arrays that hold one are walked into; the
 * rest is written whole.
 */
export function* jsonPieces(value: unknown): Generator<string> {
  if (value instanceof RowsJson) {
    yield "[";
    for (let i = 0; i < value.rows.length; i++) {
      const encoded = JSON.stringify(value.rows[i]!.map(encodeValue));
      yield i === 0 ? encoded : `,${encoded}`;
    }
    yield "]";
  } else if (!walked(value)) {
    yield JSON.stringify(value) ?? "null";
  } else if (Array.isArray(value)) {
    yield "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ",";
      const v = value[i];
      if (v === undefined || typeof v === "function") yield "null";
      else yield* jsonPieces(v);
    }
    yield "]";
  } else {
    let head = "{";
    for (const [k, v] of Object.entries(value as object)) {
      if (v === undefined || typeof v === "function") continue;
      head += `${head === "{" ? "" : ","}${JSON.stringify(k)}:`;
      if (walked(v)) {
        yield head;
        yield* jsonPieces(v);
        head = "";
      } else head += JSON.stringify(v);
    }
    yield `${head}}`;
  }
}

/** How long encoding runs before other requests get a turn. */
const SLICE_MS = 4;

/**
 * Feeds the JSON text of `value` to `write` in chunks of about `chunkChars`, giving the event loop
 * a turn every few milliseconds; `write` may return a promise to wait for the reader (backpressure).
 * Returns the rest, shorter than a chunk, for the caller to finish with.
 */
export async function writePieces(
  value: unknown,
  chunkChars: number,
  write: (chunk: string) => undefined | Promise<void>,
): Promise<string> {
  let buf = "";
  let slice = performance.now();
  let pieces = 0;
  for (const piece of jsonPieces(value)) {
    buf += piece;
    // Reading the clock costs little, but not nothing: every few pieces is often enough.
    if ((++pieces & 31) === 0 && performance.now() - slice > SLICE_MS) {
      await yieldToLoop();
      slice = performance.now();
    }
    if (buf.length < chunkChars) continue;
    const waiting = write(buf);
    buf = "";
    if (waiting) await waiting;
  }
  return buf;
}
