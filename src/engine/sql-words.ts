import { EOF, Lexer, PUNCT, QUOTED_ID, STRING, WORD } from "./sql-tokens.js";

/**
 * Lowercase as SQLite folds names when it compares them: ASCII letters only ("Ä" stays "Ä").
 * JavaScript's toLowerCase would fold more, making two names SQLite tells apart look the same.
 */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** A token of a statement as the schema checks read it: comments gone, words lowercased. */
export interface Word {
  /** `word`: a bare word (keyword or name); `name`: a quoted identifier; `string`: a literal. */
  kind: "word" | "name" | "string" | "punct" | "other";
  /** Lowercased for words, unquoted and lowercased for names, as written otherwise. */
  text: string;
}

/**
 * A statement's tokens, the way SQLite reads them: comments anywhere are gone, a keyword is a
 * bare word, and what is inside a string or a quoted name is never a keyword. Checks that read
 * a statement's shape (which table a CREATE INDEX is on, whether an INSERT may replace) work on
 * these, never on the raw text, which `/* ... *\/` between keywords would fool.
 */
export function wordsOf(sql: string): Word[] {
  const lx = new Lexer(sql);
  const out: Word[] = [];
  for (let t = lx.next(); t !== EOF; t = lx.next()) {
    const raw = sql.slice(lx.start, lx.end);
    if (t === WORD) out.push({ kind: "word", text: asciiLower(raw) });
    else if (t === QUOTED_ID) out.push({ kind: "name", text: unquoteName(raw) });
    else if (t === STRING) out.push({ kind: "string", text: raw });
    else if (t === PUNCT) out.push({ kind: "punct", text: raw });
    else out.push({ kind: "other", text: raw });
  }
  return out;
}

function unquoteName(raw: string): string {
  const open = raw[0];
  const inner = open === "[" ? raw.slice(1, -1) : raw.slice(1, -1).replaceAll(open! + open!, open!);
  return asciiLower(inner);
}

/** Whether `words` holds the keywords `seq` one after another, starting anywhere. */
export function hasSequence(words: readonly Word[], ...seq: string[]): boolean {
  for (let i = 0; i + seq.length <= words.length; i++)
    if (seq.every((w, j) => words[i + j]!.kind === "word" && words[i + j]!.text === w)) return true;
  return false;
}

/**
 * A possibly schema-qualified name at `at`: a bare word, a quoted name or a string (SQLite takes
 * all three), with its schema when written `schema.name`. Undefined when none is there.
 */
export function qualifiedName(
  words: readonly Word[],
  at: number,
): { schema?: string; name: string; next: number } | undefined {
  const nameText = (w: Word | undefined) =>
    w === undefined
      ? undefined
      : w.kind === "word" || w.kind === "name"
        ? w.text
        : w.kind === "string"
          ? asciiLower(w.text.slice(1, -1).replaceAll("''", "'"))
          : undefined;
  const first = nameText(words[at]);
  if (first === undefined) return undefined;
  if (words[at + 1]?.kind === "punct" && words[at + 1]!.text === ".") {
    const second = nameText(words[at + 2]);
    return second === undefined ? undefined : { schema: first, name: second, next: at + 3 };
  }
  return { name: first, next: at + 1 };
}
