/**
 * Statements of a SQL text, found on SQLite's tokens (sql-tokens.ts). The `libsql` driver's
 * `prepare()` compiles only the first statement of a string and silently ignores the rest, so the
 * server splits, counts, classifies and inspects statements itself before handing them to the driver.
 *
 * Everything works on char codes in one pass with a handful of integer fields, because this runs on
 * every request; strings are only allocated for the few leading keywords a statement is classified by.
 */

import {
  CH_BACKTICK,
  CH_COMMA,
  CH_DOT,
  CH_DQUOTE,
  CH_EQ,
  CH_LBRACKET,
  CH_LPAREN,
  CH_QUOTE,
  CH_RPAREN,
  EOF,
  Lexer,
  PARAM,
  PUNCT,
  QUOTED_ID,
  SEMICOLON,
  STRING,
  WORD,
  wordIs,
} from "./sql-tokens.js";
import { READ_PRAGMAS_WITH_ARG, type StatementInfo, type StatementKind } from "./statement-info.js";

export type { StatementInfo, StatementKind };

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

/** What collects a statement's parameters as the scanner passes them (see sql-params.ts). */
export interface ParamSink {
  add(src: string, start: number, end: number): void;
}

/** Where a statement's boundaries came out, reused between statements to avoid per-statement objects. */
export class StatementScanner {
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
  scan(params: ParamSink | null): boolean {
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
      case S_WITH_AFTER_NAME:
      case S_WITH_AFTER_AS:
      case S_WITH_AFTER_BODY:
        this.inWith(t);
        return;
      case S_SKIP_PARENS: {
        const p = this.punct(t);
        if (p === CH_LPAREN) this.parenDepth++;
        else if (p === CH_RPAREN && --this.parenDepth === 0) this.state = this.resume;
        return;
      }
    }
  }

  /** The states of a WITH clause: its names, their bodies, then the statement it introduces. */
  private inWith(t: number): void {
    switch (this.state) {
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

/** Whether `sql` is one statement that, by its words alone, writes (DML or DDL). */
export function writesBySyntax(sql: string): boolean {
  const statements = splitStatements(sql);
  return statements.length === 1 && statements[0]!.kind === "write";
}
