/**
 * Where SQL statements end, the way SQLite's own shell decides it (sqlite3_complete): a semicolon
 * ends a statement unless it is inside a string, a quoted name or a comment, or inside the body
 * of a CREATE TRIGGER, which ends only at `END;`. The shell needs it to know when a typed
 * statement is complete, and scripts to send statements one at a time (to say which one failed).
 */

type Token = "semi" | "ws" | "other" | "explain" | "create" | "temp" | "trigger" | "end";

const KEYWORDS: Record<string, Token> = {
  explain: "explain",
  create: "create",
  temp: "temp",
  temporary: "temp",
  trigger: "trigger",
  end: "end",
};

/**
 * States: 0 start of input, 1 after a complete statement, 2 inside a statement, 3 after EXPLAIN,
 * 4 after CREATE (and TEMP), 5 inside a trigger body, 6 after a `;` in a trigger body, 7 after
 * `; END` in one. A statement is complete when a `;` brings the state to 1.
 */
const ORDER: Token[] = ["semi", "ws", "other", "explain", "create", "temp", "trigger", "end"];
const NEXT: number[][] = [
  [1, 0, 2, 3, 4, 2, 2, 2],
  [1, 1, 2, 3, 4, 2, 2, 2],
  [1, 2, 2, 2, 2, 2, 2, 2],
  [1, 3, 3, 2, 4, 2, 2, 2],
  [1, 4, 2, 2, 2, 4, 5, 2],
  [6, 5, 5, 5, 5, 5, 5, 5],
  [6, 6, 5, 5, 5, 5, 5, 7],
  [1, 7, 5, 5, 5, 5, 5, 5],
];

/** The end of the token starting at `i` (exclusive) and its class. */
function token(sql: string, i: number): [number, Token] {
  const c = sql[i]!;
  if (c === ";") return [i + 1, "semi"];
  if (/\s/.test(c)) return [i + 1, "ws"];
  if (c === "-" && sql[i + 1] === "-") {
    const nl = sql.indexOf("\n", i);
    return [nl === -1 ? sql.length : nl + 1, "ws"];
  }
  if (c === "/" && sql[i + 1] === "*") {
    const close = sql.indexOf("*/", i + 2);
    return [close === -1 ? sql.length : close + 2, "ws"];
  }
  const quote = c === "[" ? "]" : c === "'" || c === '"' || c === "`" ? c : undefined;
  if (quote) {
    // A doubled quote inside is part of the text: scanning on from it finds the real end.
    const close = sql.indexOf(quote, i + 1);
    return [close === -1 ? sql.length : close + 1, "other"];
  }
  const word = /^[\p{L}\p{N}_$]+/u.exec(sql.slice(i, i + 64));
  if (word) {
    const end = i + word[0].length;
    return [end, KEYWORDS[word[0].toLowerCase()] ?? "other"];
  }
  return [i + 1, "other"];
}

export interface SplitResult {
  /** Complete statements, each with its `;`. */
  statements: { sql: string; line: number }[];
  /** What follows the last complete statement (an unfinished one, or only whitespace). */
  rest: string;
}

/** Cuts `sql` into complete statements; `firstLine` numbers the lines for messages. */
export function splitStatements(sql: string, firstLine = 1): SplitResult {
  const statements: { sql: string; line: number }[] = [];
  let state = 0;
  let start = 0;
  let meaningful = false;
  // Lines are counted as the scan moves on, not from the start each time (dumps are long).
  let counted = 0;
  let line = firstLine;
  for (let i = 0; i < sql.length; ) {
    const [end, kind] = token(sql, i);
    state = NEXT[state]![ORDER.indexOf(kind)]!;
    if (kind !== "ws" && kind !== "semi") meaningful = true;
    if (kind === "semi" && state === 1) {
      if (meaningful) {
        const text = sql.slice(start, end);
        const lead = text.length - text.trimStart().length;
        line += countLines(sql, counted, start + lead);
        counted = start + lead;
        statements.push({ sql: text.trim(), line });
      }
      start = end;
      meaningful = false;
    }
    i = end;
  }
  return { statements, rest: sql.slice(start) };
}

function countLines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** Whether text holds anything besides whitespace and comments. */
export function hasStatement(text: string): boolean {
  for (let i = 0; i < text.length; ) {
    const [end, kind] = token(text, i);
    if (kind !== "ws" && kind !== "semi") return true;
    i = end;
  }
  return false;
}
