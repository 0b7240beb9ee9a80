/**
 * What kind of statement a SQL text is, by its first keyword: a bounded set, so it can label a
 * metric and stand in a log line without any of the statement's values.
 */
export const STATEMENT_KINDS = [
  "select",
  "insert",
  "update",
  "delete",
  "replace",
  "with",
  "create",
  "drop",
  "alter",
  "pragma",
  "begin",
  "commit",
  "rollback",
  "savepoint",
  "release",
  "attach",
  "detach",
  "vacuum",
  "analyze",
  "reindex",
  "explain",
  "values",
] as const;

export type StatementKind = (typeof STATEMENT_KINDS)[number] | "other";

const KNOWN: ReadonlySet<string> = new Set(STATEMENT_KINDS);
/** Leading whitespace and comments (`-- ...` lines, `/* ... *\/` blocks) before the first keyword. */
const LEADING = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;
const WORD = /^[A-Za-z]+/;

/** `end` is SQLite's other spelling of `commit`. */
const ALIASES: Record<string, StatementKind> = { end: "commit" };

/** Kinds of texts seen lately: clients send the same few texts over and over. */
const kinds = new Map<string, StatementKind>();
const MAX_KINDS = 1024;

export function statementKind(sql: string): StatementKind {
  let kind = kinds.get(sql);
  if (kind === undefined) {
    kind = kindOf(sql);
    // A client sending endless new texts empties it now and then; long texts aren't kept at all.
    if (kinds.size >= MAX_KINDS) kinds.clear();
    if (sql.length <= 1024) kinds.set(sql, kind);
  }
  return kind;
}

function kindOf(sql: string): StatementKind {
  const rest = sql.slice(LEADING.exec(sql)?.[0].length ?? 0);
  const word = WORD.exec(rest)?.[0].toLowerCase();
  if (word === undefined) return "other";
  if (KNOWN.has(word)) return word as StatementKind;
  return ALIASES[word] ?? "other";
}

/** Longest statement shape logged: enough to tell statements apart, short enough for every line. */
const MAX_SHAPE = 120;

/**
 * A statement as it may be logged: literals (strings, blobs, numbers) replaced by `?`, runs of
 * whitespace and comments collapsed, cut to MAX_SHAPE characters. Bound arguments are never seen
 * here, and values written into the SQL text itself are masked, so neither reaches the log.
 */
export function statementShape(sql: string): string {
  let shape = shapes.get(sql);
  if (shape === undefined) {
    shape = shapeOf(sql);
    // Clients send the same few texts over and over; a client sending endless new ones empties it.
    if (shapes.size >= SHAPES_KEPT) shapes.clear();
    if (sql.length <= MAX_SHAPE * 4) shapes.set(sql, shape);
  }
  return shape;
}

/** Shapes of recent statement texts, so a busy database's log lines don't redo the same work. */
const shapes = new Map<string, string>();
const SHAPES_KEPT = 1024;

function shapeOf(sql: string): string {
  const head = sql.length > MAX_SHAPE * 4 ? sql.slice(0, MAX_SHAPE * 4) : sql;
  const shape = head
    .replace(/--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/g, " ")
    // A string literal, possibly cut off at the end of `head`; a blob is x'..'.
    .replace(/[xX]?'(?:[^']|'')*(?:'|$)/g, "?")
    .replace(/(?<![\w$"`\]])[-+]?(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+)\b/g, "?")
    .replace(/\s+/g, " ")
    .trim();
  return shape.length > MAX_SHAPE ? `${shape.slice(0, MAX_SHAPE)}…` : shape;
}
