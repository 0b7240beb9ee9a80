import { InvalidError } from "../errors.js";

/**
 * Keyset pagination. A cursor is opaque to clients: the base64url of the sort key the previous
 * page ended on. Keyset (not offset) paging keeps every page as cheap as the first, however many
 * rows there are, and a row inserted or deleted meanwhile can't make a page skip or repeat others.
 */
export interface PageRequest {
  /** Rows per page; absent: every row, in one answer. */
  limit?: number;
  /** Where the previous page ended. */
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  /** Cursor of the next page, or null on the last one. */
  next: string | null;
}

export function encodeCursor(key: string | number): string {
  return Buffer.from(JSON.stringify({ k: key })).toString("base64url");
}

/** The key a cursor carries; a cursor that Shoal didn't make is a 400. */
export function decodeCursor(cursor: string): string | number {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { k?: unknown };
    if (typeof parsed.k === "string" || typeof parsed.k === "number") return parsed.k;
  } catch {
    // fall through
  }
  throw new InvalidError("invalid cursor: pass the pagination.next value of the previous page");
}

/** The string key of a cursor, for lists sorted by a name. */
export function decodeStringCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const k = decodeCursor(cursor);
  if (typeof k !== "string") throw new InvalidError("invalid cursor: it belongs to another list");
  return k;
}

/**
 * Cuts a page out of rows fetched with `limit + 1` (one more than asked, to learn whether another
 * page follows without a count).
 */
export function pageOf<T>(rows: T[], limit: number | undefined, keyOf: (row: T) => string | number): Page<T> {
  if (limit === undefined || rows.length <= limit) return { items: rows, next: null };
  const items = rows.slice(0, limit);
  return { items, next: encodeCursor(keyOf(items[items.length - 1] as T)) };
}
