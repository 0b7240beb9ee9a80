/**
 * SQLite's tokens, one at a time: the lexer under the statement scanner (sql-lexer.ts) and the
 * checks that must read names the way SQLite does (sql-guard.ts, PRAGMA checks). It allocates no
 * strings while scanning; callers slice the few tokens they look at.
 */
// Token types. Whitespace and comments never become tokens.
export const EOF = 0;
export const WORD = 1;
export const QUOTED_ID = 2;
export const STRING = 3;
export const NUMBER = 4;
export const PARAM = 5;
export const PUNCT = 6;
export const SEMICOLON = 7;

export const CH_TAB = 9;
export const CH_LF = 10;
export const CH_CR = 13;
export const CH_SPACE = 32;
export const CH_DQUOTE = 34;
export const CH_HASH = 35;
export const CH_DOLLAR = 36;
export const CH_QUOTE = 39;
export const CH_LPAREN = 40;
export const CH_RPAREN = 41;
export const CH_STAR = 42;
export const CH_COMMA = 44;
export const CH_MINUS = 45;
export const CH_DOT = 46;
export const CH_SLASH = 47;
export const CH_0 = 48;
export const CH_9 = 57;
export const CH_COLON = 58;
export const CH_SEMI = 59;
export const CH_EQ = 61;
export const CH_QMARK = 63;
export const CH_AT = 64;
export const CH_LBRACKET = 91;
export const CH_BACKTICK = 96;

/** SQLite's largest possible parameter index (SQLITE_MAX_VARIABLE_NUMBER); anything above is an error there. */
export const MAX_PARAM_INDEX = 32766;

export function isSpace(c: number): boolean {
  // SQLite's isspace: space, \t, \n, \v, \f, \r.
  return c === CH_SPACE || (c >= CH_TAB && c <= CH_CR);
}

export function isDigit(c: number): boolean {
  return c >= CH_0 && c <= CH_9;
}

export function isIdStart(c: number): boolean {
  // SQLite treats every byte >= 0x80 as an identifier character, so any non-ASCII code unit qualifies.
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c >= 0x80;
}

export function isIdChar(c: number): boolean {
  return isIdStart(c) || isDigit(c) || c === CH_DOLLAR;
}

/** Case-insensitive comparison of `src[start, end)` with a lowercase ASCII keyword, without allocating. */
export function wordIs(src: string, start: number, end: number, keyword: string): boolean {
  const n = keyword.length;
  if (end - start !== n) return false;
  for (let i = 0; i < n; i++) {
    let c = src.charCodeAt(start + i);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== keyword.charCodeAt(i)) return false;
  }
  return true;
}

/** Pulls one token at a time; the current token is `src[start, end)` of type `type`. */
export class Lexer {
  pos = 0;
  start = 0;
  end = 0;
  type = EOF;

  constructor(readonly src: string) {}

  next(): number {
    const src = this.src;
    const len = src.length;
    let i = this.pos;
    for (;;) {
      if (i >= len) {
        this.start = this.end = this.pos = len;
        this.type = EOF;
        return EOF;
      }
      const c = src.charCodeAt(i);
      if (isSpace(c)) {
        i++;
      } else if (c === CH_MINUS && src.charCodeAt(i + 1) === CH_MINUS) {
        i += 2;
        while (i < len && src.charCodeAt(i) !== CH_LF) i++;
      } else if (c === CH_SLASH && src.charCodeAt(i + 1) === CH_STAR) {
        // An unterminated block comment swallows the rest of the input, as in SQLite.
        const close = src.indexOf("*/", i + 2);
        i = close < 0 ? len : close + 2;
      } else {
        break;
      }
    }
    this.start = i;
    const c = src.charCodeAt(i);
    let type: number;
    if (isIdStart(c)) {
      if ((c === 120 || c === 88) && src.charCodeAt(i + 1) === CH_QUOTE) {
        i = this.quoted(i + 1, CH_QUOTE);
        type = STRING;
      } else {
        i++;
        while (i < len && isIdChar(src.charCodeAt(i))) i++;
        type = WORD;
      }
    } else if (c === CH_QUOTE) {
      i = this.quoted(i, CH_QUOTE);
      type = STRING;
    } else if (c === CH_DQUOTE || c === CH_BACKTICK) {
      i = this.quoted(i, c);
      type = QUOTED_ID;
    } else if (c === CH_LBRACKET) {
      const close = src.indexOf("]", i + 1);
      i = close < 0 ? len : close + 1;
      type = QUOTED_ID;
    } else if (isDigit(c) || (c === CH_DOT && isDigit(src.charCodeAt(i + 1)))) {
      // Precision is irrelevant here: the token only has to stop at the same boundaries SQLite's would.
      i++;
      while (i < len) {
        const d = src.charCodeAt(i);
        if (!isIdChar(d) && d !== CH_DOT) break;
        i++;
      }
      type = NUMBER;
    } else if (c === CH_QMARK) {
      i++;
      while (i < len && isDigit(src.charCodeAt(i))) i++;
      type = PARAM;
    } else if (c === CH_COLON || c === CH_AT || c === CH_DOLLAR || c === CH_HASH) {
      const end = this.variable(i);
      if (end > 0) {
        i = end;
        type = PARAM;
      } else {
        i++;
        type = PUNCT;
      }
    } else if (c === CH_SEMI) {
      i++;
      type = SEMICOLON;
    } else {
      i++;
      type = PUNCT;
    }
    this.end = this.pos = i;
    this.type = type;
    return type;
  }

  /** End of a quoted token opened at `i`; a doubled quote is an escaped one. Unterminated runs to the end. */
  private quoted(i: number, quote: number): number {
    const src = this.src;
    const q = quote === CH_QUOTE ? "'" : quote === CH_DQUOTE ? '"' : "`";
    let j = i + 1;
    for (;;) {
      const close = src.indexOf(q, j);
      if (close < 0) return src.length;
      if (src.charCodeAt(close + 1) !== quote) return close + 1;
      j = close + 2;
    }
  }

  /**
   * End of a `:name` / `@name` / `$name` / `#name` variable at `i`, or 0 when SQLite would reject it.
   * Mirrors SQLite's TCL-style extensions (`$a::b`, `$a(x)`) so the token stops where SQLite's does.
   */
  private variable(i: number): number {
    const src = this.src;
    const len = src.length;
    let n = 0;
    let j = i + 1;
    for (; j < len; j++) {
      const c = src.charCodeAt(j);
      if (isIdChar(c)) {
        n++;
      } else if (c === CH_LPAREN && n > 0) {
        j++;
        while (j < len) {
          const d = src.charCodeAt(j);
          if (isSpace(d) || d === CH_RPAREN) break;
          j++;
        }
        return src.charCodeAt(j) === CH_RPAREN ? j + 1 : 0;
      } else if (c === CH_COLON && src.charCodeAt(j + 1) === CH_COLON) {
        j++;
      } else {
        break;
      }
    }
    return n > 0 ? j : 0;
  }
}

/**
 * The name a token spells, unquoted and lowercased: a bare word, a quoted identifier, or a string,
 * which SQLite also accepts where a name goes (`FROM 'fsdir'(...)`, `PRAGMA 'busy_timeout'`).
 */
function nameOf(lx: Lexer, t: number): string | undefined {
  if (t === WORD) return lx.src.slice(lx.start, lx.end).toLowerCase();
  if (t !== QUOTED_ID && t !== STRING) return undefined;
  const raw = lx.src.slice(lx.start, lx.end);
  const open = raw[0]!;
  // x'...' is a blob, never a name.
  if (t === STRING && open !== "'") return undefined;
  const inner = raw.slice(1, -1);
  return (open === "[" ? inner : inner.split(open + open).join(open)).toLowerCase();
}

/**
 * Every name in the SQL (bare, quoted, or a string, unquoted and lowercased; comments left out):
 * for refusing statements that name a function, however it is spelled. Strings are included
 * because SQLite takes one as a table-valued function's name; a string that merely equals such a
 * name is refused too, which is the safe mistake.
 */
export function identifiersIn(sql: string): Set<string> {
  const lx = new Lexer(sql);
  const out = new Set<string>();
  for (let t = lx.next(); t !== EOF; t = lx.next()) {
    const id = nameOf(lx, t);
    if (id !== undefined) out.add(id);
  }
  return out;
}

/**
 * The PRAGMA a statement runs and its form: `read` (`PRAGMA x`), `assign` (`PRAGMA x = v`) or
 * `call` (`PRAGMA x(v)`). Names are read the way SQLite reads them: quoted or bare, with or
 * without a schema, comments anywhere. Undefined for a statement that isn't a PRAGMA.
 */
export function pragmaOf(sql: string): { name: string; form: "read" | "assign" | "call" } | undefined {
  const lx = new Lexer(sql);
  // Keywords are bare words: a quoted "pragma" is an identifier.
  const keyword = () => (lx.next() === WORD ? lx.src.slice(lx.start, lx.end).toLowerCase() : undefined);
  let first = keyword();
  // EXPLAIN [QUERY PLAN] PRAGMA ... is compiled too, and compiling applies the PRAGMA.
  if (first === "explain") {
    first = keyword();
    if (first === "query") {
      if (keyword() !== "plan") return undefined;
      first = keyword();
    }
  }
  if (first !== "pragma") return undefined;
  let name = nameOf(lx, lx.next()) ?? "";
  let t = lx.next();
  if (t === PUNCT && sql.charCodeAt(lx.start) === CH_DOT) {
    name = nameOf(lx, lx.next()) ?? "";
    t = lx.next();
  }
  const c = t === PUNCT ? sql.charCodeAt(lx.start) : 0;
  return { name, form: c === CH_EQ ? "assign" : c === CH_LPAREN ? "call" : "read" };
}

/**
 * The SQL with every blob literal (`x'01ff'`) emptied to `x''`, or the SQL itself when it has
 * none. EXPLAIN lists a blob literal's bytes as text, and the driver aborts the process on text
 * that isn't UTF-8; the bytecode's shape doesn't depend on the bytes.
 */
export function withEmptyBlobs(sql: string): string {
  if (!/[xX]'/.test(sql)) return sql;
  const lx = new Lexer(sql);
  let out = "";
  let copied = 0;
  for (let t = lx.next(); t !== EOF; t = lx.next()) {
    if (t !== STRING || sql.charCodeAt(lx.start) === CH_QUOTE) continue;
    out += `${sql.slice(copied, lx.start)}x''`;
    copied = lx.end;
  }
  return copied === 0 ? sql : out + sql.slice(copied);
}
