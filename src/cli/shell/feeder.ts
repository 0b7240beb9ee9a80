import { hasStatement, splitStatements } from "../sql-split.js";

/** A piece of shell input: a SQL statement, or a dot-command such as `.tables`. */
export type Item = { kind: "sql"; sql: string; line: number } | { kind: "dot"; text: string; line: number };

/**
 * Turns shell input, line by line, into statements and dot-commands, the way sqlite3 reads it: a
 * line starting with `.` outside a statement is a command; anything else is SQL, run once a `;`
 * completes it.
 */
export class Feeder {
  private buffer = "";
  private bufferLine = 1;
  private line = 0;

  /** Whether an unfinished statement is waiting for more lines. */
  get pending(): boolean {
    return hasStatement(this.buffer);
  }

  push(text: string): Item[] {
    this.line++;
    if (!this.pending && text.trimStart().startsWith(".")) {
      this.buffer = "";
      return [{ kind: "dot", text: text.trim(), line: this.line }];
    }
    if (!this.pending) {
      this.buffer = "";
      this.bufferLine = this.line;
    }
    this.buffer += `${text}\n`;
    const { statements, rest } = splitStatements(this.buffer, this.bufferLine);
    if (statements.length === 0) return [];
    const restStart = this.buffer.length - rest.length;
    this.bufferLine += countNewlines(this.buffer.slice(0, restStart));
    this.buffer = rest;
    return statements.map((s) => ({ kind: "sql", sql: s.sql, line: s.line }));
  }

  /** At the end of the input: a last statement without its `;` still runs. */
  finish(): Item[] {
    const rest = this.buffer;
    this.buffer = "";
    return hasStatement(rest) ? [{ kind: "sql", sql: rest.trim(), line: this.bufferLine }] : [];
  }

  /** Forgets an unfinished statement (Ctrl-C in the shell). */
  clear(): void {
    this.buffer = "";
  }
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}
