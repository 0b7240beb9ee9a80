/**
 * A small SQL lexer following SQLite's tokenizer. The `libsql` driver's `prepare()` compiles only the
 * first statement of a string and silently ignores the rest, so the server splits, counts, classifies
 * and inspects statements itself before handing them to the driver.
 *
 * Everything works on char codes in one pass with a handful of integer fields, because this runs on
 * every request; strings are only allocated for the few leading keywords a statement is classified by.
 */

/** What a statement does, as far as transaction handling and read/write routing care. */
export type StatementKind =
  | "read"
  | "write"
  | "begin"
  | "commit"
  | "rollback"
  | "savepoint"
  | "attach"
  | "detach"
  | "other";

/** One statement of a SQL text and what kind of statement it is. */
export interface StatementInfo {
  /** The statement's text, trimmed of surrounding whitespace and comments, without the trailing semicolon. */
  sql: string;
  kind: StatementKind;
  /** For kind "begin": "deferred" | "immediate" | "exclusive" | "readonly" (plain BEGIN = "deferred"). Otherwise undefined. */
  beginMode?: "deferred" | "immediate" | "exclusive" | "readonly";
  /** True for INSERT/UPDATE/DELETE/REPLACE (also when introduced by WITH): the statements whose changes() count. */
  isDml: boolean;
  /** True when the statement is INSERT or REPLACE (also after WITH): last_insert_rowid is meaningful. */
  isInsert: boolean;
  /** True when the statement starts with EXPLAIN. */
  isExplain: boolean;
}

// Token types. Whitespace and comments never become tokens.
const EOF = 0;
const WORD = 1;
const QUOTED_ID = 2;
const STRING = 3;
const NUMBER = 4;
const PARAM = 5;
const PUNCT = 6;
const SEMICOLON = 7;

const CH_TAB = 9;
const CH_LF = 10;
const CH_CR = 13;
const CH_SPACE = 32;
const CH_DQUOTE = 34;
const CH_HASH = 35;
const CH_DOLLAR = 36;
const CH_QUOTE = 39;
const CH_LPAREN = 40;
const CH_RPAREN = 41;
const CH_STAR = 42;
const CH_COMMA = 44;
const CH_MINUS = 45;
const CH_DOT = 46;
const CH_SLASH = 47;
const CH_0 = 48;
const CH_9 = 57;
const CH_COLON = 58;
const CH_SEMI = 59;
const CH_EQ = 61;
const CH_QMARK = 63;
const CH_AT = 64;
const CH_LBRACKET = 91;
const CH_BACKTICK = 96;

/** SQLite's largest possible parameter index (SQLITE_MAX_VARIABLE_NUMBER); anything above is an error there. */
const MAX_PARAM_INDEX = 32766;

function isSpace(c: number): boolean {
  // SQLite's isspace: space, \t, \n, \v, \f, \r.
  return c === CH_SPACE || (c >= CH_TAB && c <= CH_CR);
}

function isDigit(c: number): boolean {
  return c >= CH_0 && c <= CH_9;
}

function isIdStart(c: number): boolean {
  // SQLite treats every byte >= 0x80 as an identifier character, so any non-ASCII code unit qualifies.
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c >= 0x80;
}

function isIdChar(c: number): boolean {
  return isIdStart(c) || isDigit(c) || c === CH_DOLLAR;
}

/** Case-insensitive comparison of `src[start, end)` with a lowercase ASCII keyword, without allocating. */
function wordIs(src: string, start: number, end: number, keyword: string): boolean {
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
class Lexer {
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

// Classifier states.
const S_START = 0;
const S_DONE = 1;
const S_CREATE = 2;
const S_CREATE_TEMP = 3;
const S_BEGIN = 4;
const S_BEGIN_TRANSACTION = 5;
const S_ROLLBACK = 6;
const S_PRAGMA_NAME = 7;
const S_PRAGMA_AFTER_NAME = 8;
const S_WITH_NAME = 9;
const S_WITH_AFTER_NAME = 10;
const S_WITH_AFTER_AS = 11;
const S_WITH_AFTER_BODY = 12;
const S_SKIP_PARENS = 13;

/** PRAGMAs that only read even when given an argument, so `PRAGMA table_info(t)` isn't routed as a write. */
const READ_PRAGMAS_WITH_ARG: ReadonlySet<string> = new Set([
  "table_info",
  "table_xinfo",
  "table_list",
  "index_info",
  "index_xinfo",
  "index_list",
  "foreign_key_list",
  "foreign_key_check",
  "integrity_check",
  "quick_check",
  "function_list",
  "module_list",
  "pragma_list",
  "collation_list",
  "database_list",
  "compile_options",
]);

/** Where a statement's boundaries came out, reused between statements to avoid per-statement objects. */
class StatementScanner {
  readonly lexer: Lexer;
  first = -1;
  last = -1;
  kind: StatementKind = "other";
  beginMode: StatementInfo["beginMode"] = undefined;
  isDml = false;
  isInsert = false;
  isExplain = false;

  private state = S_START;
  private resume = S_DONE;
  private parenDepth = 0;
  private pragmaStart = 0;
  private pragmaEnd = 0;
  /**
   * Where a CREATE TRIGGER statement stands: -1 when the statement isn't one; 0 inside it; 1 just
   * after a `;` in it; 2 just after `; END`. A trigger's body is statements ending in `;` and no
   * statement begins with END, so the first `; END` closes the trigger: its next `;` ends the
   * statement. (Counting BEGIN/CASE ... END nesting instead would be fooled by columns or aliases
   * named `begin`, `case` or `end`, which SQLite allows, and let a dump hide a statement.)
   */
  private trigger = -1;

  constructor(src: string) {
    this.lexer = new Lexer(src);
  }

  /**
   * Advances over the next non-empty statement; false when only empty statements remain.
   * `params`, when given, collects the statement's parameters as they go by.
   */
  scan(params: ParamCollector | null): boolean {
    const lx = this.lexer;
    this.reset();
    for (;;) {
      const t = lx.next();
      if (t === EOF) break;
      if (t === SEMICOLON) {
        if (this.first < 0) continue;
        if (this.trigger < 0 || this.trigger === 2) break;
        this.trigger = 1;
        this.last = lx.end;
        continue;
      }
      if (this.first < 0) this.first = lx.start;
      this.last = lx.end;
      if (this.state !== S_DONE) this.feed(t);
      // Only an END right after a `;` inside the trigger closes it (see `trigger`).
      if (this.trigger >= 0) {
        this.trigger = this.trigger === 1 && t === WORD && wordIs(lx.src, lx.start, lx.end, "end") ? 2 : 0;
      }
      if (t === PARAM && params !== null) params.add(lx.src, lx.start, lx.end);
    }
    return this.first >= 0;
  }

  info(): StatementInfo {
    const info: StatementInfo = {
      sql: this.lexer.src.slice(this.first, this.last),
      kind: this.kind,
      isDml: this.isDml,
      isInsert: this.isInsert,
      isExplain: this.isExplain,
    };
    if (this.kind === "begin") info.beginMode = this.beginMode;
    return info;
  }

  private reset(): void {
    this.first = -1;
    this.last = -1;
    this.kind = "other";
    this.beginMode = undefined;
    this.isDml = false;
    this.isInsert = false;
    this.isExplain = false;
    this.state = S_START;
    this.resume = S_DONE;
    this.parenDepth = 0;
    this.trigger = -1;
  }

  /** A short word lowercased, or "" for anything longer than every keyword looked at. */
  private keyword(t: number): string {
    const lx = this.lexer;
    if (t !== WORD || lx.end - lx.start > 12) return "";
    return lx.src.slice(lx.start, lx.end).toLowerCase();
  }

  private punct(t: number): number {
    return t === PUNCT ? this.lexer.src.charCodeAt(this.lexer.start) : 0;
  }

  private feed(t: number): void {
    switch (this.state) {
      case S_START:
        this.start(this.keyword(t));
        return;
      case S_CREATE:
      case S_CREATE_TEMP: {
        const kw = this.keyword(t);
        if (kw === "trigger") {
          this.trigger = 0;
          this.state = S_DONE;
        } else if (this.state === S_CREATE && (kw === "temp" || kw === "temporary")) {
          this.state = S_CREATE_TEMP;
        } else {
          this.state = S_DONE;
        }
        return;
      }
      case S_BEGIN: {
        const kw = this.keyword(t);
        if (kw === "deferred" || kw === "immediate" || kw === "exclusive" || kw === "readonly") {
          this.beginMode = kw;
          this.state = S_DONE;
        } else if (kw === "transaction") {
          this.state = S_BEGIN_TRANSACTION;
        } else {
          this.state = S_DONE;
        }
        return;
      }
      case S_BEGIN_TRANSACTION:
        // libSQL's "BEGIN TRANSACTION READONLY"; any other word here is SQLite's ignored transaction name.
        if (this.keyword(t) === "readonly") this.beginMode = "readonly";
        this.state = S_DONE;
        return;
      case S_ROLLBACK:
        if (t === WORD && wordIs(this.lexer.src, this.lexer.start, this.lexer.end, "to")) {
          this.kind = "savepoint";
          this.state = S_DONE;
        }
        return;
      case S_PRAGMA_NAME:
        if (t === WORD || t === QUOTED_ID || t === STRING) {
          this.pragmaStart = this.lexer.start;
          this.pragmaEnd = this.lexer.end;
          this.state = S_PRAGMA_AFTER_NAME;
        } else {
          this.state = S_DONE;
        }
        return;
      case S_PRAGMA_AFTER_NAME:
        this.pragmaAfterName(this.punct(t));
        return;
      case S_WITH_NAME:
        this.state = t === WORD || t === QUOTED_ID || t === STRING ? S_WITH_AFTER_NAME : S_DONE;
        return;
      case S_WITH_AFTER_NAME: {
        // WITH RECURSIVE lands here with RECURSIVE taken as the name, so the real name after it has to be
        // accepted in this state too.
        const p = this.punct(t);
        if (p === CH_LPAREN) this.skipParens(S_WITH_AFTER_NAME);
        else if (this.keyword(t) === "as") this.state = S_WITH_AFTER_AS;
        else if (t !== WORD && t !== QUOTED_ID && t !== STRING) this.state = S_DONE;
        return;
      }
      case S_WITH_AFTER_AS: {
        if (this.punct(t) === CH_LPAREN) {
          this.skipParens(S_WITH_AFTER_BODY);
        } else {
          const kw = this.keyword(t);
          if (kw !== "not" && kw !== "materialized") this.state = S_DONE;
        }
        return;
      }
      case S_WITH_AFTER_BODY:
        if (this.punct(t) === CH_COMMA) {
          this.state = S_WITH_NAME;
        } else {
          this.afterWith(this.keyword(t));
          this.state = S_DONE;
        }
        return;
      case S_SKIP_PARENS: {
        const p = this.punct(t);
        if (p === CH_LPAREN) this.parenDepth++;
        else if (p === CH_RPAREN && --this.parenDepth === 0) this.state = this.resume;
        return;
      }
    }
  }

  private start(kw: string): void {
    this.state = S_DONE;
    switch (kw) {
      case "select":
      case "values":
        this.kind = "read";
        return;
      case "explain":
        this.kind = "read";
        this.isExplain = true;
        return;
      case "with":
        this.state = S_WITH_NAME;
        return;
      case "insert":
      case "replace":
        this.kind = "write";
        this.isDml = true;
        this.isInsert = true;
        return;
      case "update":
      case "delete":
        this.kind = "write";
        this.isDml = true;
        return;
      case "create":
        this.kind = "write";
        this.state = S_CREATE;
        return;
      case "drop":
      case "alter":
      case "reindex":
      case "vacuum":
      case "analyze":
        this.kind = "write";
        return;
      case "pragma":
        this.kind = "read";
        this.state = S_PRAGMA_NAME;
        return;
      case "begin":
        this.kind = "begin";
        this.beginMode = "deferred";
        this.state = S_BEGIN;
        return;
      case "commit":
      case "end":
        this.kind = "commit";
        return;
      case "rollback":
        this.kind = "rollback";
        this.state = S_ROLLBACK;
        return;
      case "savepoint":
      case "release":
        this.kind = "savepoint";
        return;
      case "attach":
        this.kind = "attach";
        return;
      case "detach":
        this.kind = "detach";
        return;
    }
  }

  private afterWith(kw: string): void {
    switch (kw) {
      case "select":
      case "values":
        this.kind = "read";
        return;
      case "insert":
      case "replace":
        this.kind = "write";
        this.isDml = true;
        this.isInsert = true;
        return;
      case "update":
      case "delete":
        this.kind = "write";
        this.isDml = true;
        return;
    }
  }

  private pragmaAfterName(p: number): void {
    if (p === CH_DOT) {
      this.state = S_PRAGMA_NAME;
      return;
    }
    this.state = S_DONE;
    if (p === CH_EQ) {
      this.kind = "write";
    } else if (p === CH_LPAREN) {
      let name = this.lexer.src.slice(this.pragmaStart, this.pragmaEnd);
      const q = name.charCodeAt(0);
      if (q === CH_DQUOTE || q === CH_BACKTICK || q === CH_QUOTE || q === CH_LBRACKET)
        name = name.slice(1, -1);
      if (!READ_PRAGMAS_WITH_ARG.has(name.toLowerCase())) this.kind = "write";
    }
  }

  private skipParens(resume: number): void {
    this.parenDepth = 1;
    this.resume = resume;
    this.state = S_SKIP_PARENS;
  }
}

/** Numbers parameters the way sqlite3ExprAssignVarNumber does. */
class ParamCollector {
  readonly names: Array<string | null> = [];
  private readonly byName = new Map<string, number>();

  add(src: string, start: number, end: number): void {
    const names = this.names;
    if (src.charCodeAt(start) !== CH_QMARK) {
      const name = src.slice(start, end);
      if (this.byName.has(name)) return;
      // "#1"-style tokens are SQLite-internal register references, not parameters.
      if (name.charCodeAt(0) === CH_HASH && isDigit(name.charCodeAt(1))) return;
      if (names.length >= MAX_PARAM_INDEX) return;
      names.push(name);
      this.byName.set(name, names.length);
      return;
    }
    if (end - start === 1) {
      if (names.length < MAX_PARAM_INDEX) names.push(null);
      return;
    }
    let index = 0;
    for (let i = start + 1; i < end && index <= MAX_PARAM_INDEX; i++) {
      index = index * 10 + (src.charCodeAt(i) - CH_0);
    }
    // SQLite rejects ?0 and indexes past the limit when preparing; there is nothing to number.
    if (index < 1 || index > MAX_PARAM_INDEX) return;
    // A ?NNN that reuses a named parameter's index shares its slot, and the slot keeps the name.
    while (names.length < index) names.push(null);
  }
}

/** Splits SQL text into statements. Empty statements (only whitespace/comments/semicolons) are dropped. */
export function splitStatements(sql: string): StatementInfo[] {
  const scanner = new StatementScanner(sql);
  const out: StatementInfo[] = [];
  while (scanner.scan(null)) out.push(scanner.info());
  return out;
}

/**
 * Classifies one statement (the text may or may not end with a semicolon; leading comments allowed).
 * Given several statements, describes the first non-empty one (the one `prepare()` would compile);
 * given none, returns kind "other" with empty `sql`.
 */
export function classifyStatement(sql: string): StatementInfo {
  const scanner = new StatementScanner(sql);
  if (scanner.scan(null)) return scanner.info();
  return { sql: "", kind: "other", isDml: false, isInsert: false, isExplain: false };
}

/**
 * Parameters of one statement in order of first appearance, as SQLite would number them:
 * "?" gets the next index, "?NNN" a fixed index, ":name" / "@name" / "$name" named ones.
 * Return names exactly as written (with prefix) for named ones, and null for positional ones, in
 * index order (the array index + 1 is the SQLite parameter index). Duplicated named params appear once.
 * Given several statements, only the first non-empty one is looked at.
 */
export function statementParameters(sql: string): Array<string | null> {
  const scanner = new StatementScanner(sql);
  const params = new ParamCollector();
  scanner.scan(params);
  return params.names;
}

/** The identifier a WORD or quoted-identifier token spells, unquoted and lowercased. */
function identifierOf(lx: Lexer, t: number): string | undefined {
  if (t === WORD) return lx.src.slice(lx.start, lx.end).toLowerCase();
  if (t !== QUOTED_ID) return undefined;
  const raw = lx.src.slice(lx.start, lx.end);
  const open = raw[0]!;
  const inner = raw.slice(1, -1);
  return (open === "[" ? inner : inner.split(open + open).join(open)).toLowerCase();
}

/**
 * Every identifier in the SQL (bare or quoted, unquoted and lowercased), strings and comments
 * left out: for refusing statements that name a function, however it is spelled.
 */
export function identifiersIn(sql: string): Set<string> {
  const lx = new Lexer(sql);
  const out = new Set<string>();
  for (let t = lx.next(); t !== EOF; t = lx.next()) {
    const id = identifierOf(lx, t);
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
  if (identifierOf(lx, lx.next()) !== "pragma" || lx.type === QUOTED_ID) return undefined;
  let name = identifierOf(lx, lx.next()) ?? "";
  let t = lx.next();
  if (t === PUNCT && sql.charCodeAt(lx.start) === CH_DOT) {
    name = identifierOf(lx, lx.next()) ?? "";
    t = lx.next();
  }
  const c = t === PUNCT ? sql.charCodeAt(lx.start) : 0;
  return { name, form: c === CH_EQ ? "assign" : c === CH_LPAREN ? "call" : "read" };
}
