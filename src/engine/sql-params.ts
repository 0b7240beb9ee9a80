/**
 * A statement's parameters numbered as SQLite numbers them, found by the statement scanner in
 * the same pass that finds the statement's end.
 */
import { type ParamSink, StatementScanner } from "./sql-lexer.js";
import { CH_0, CH_HASH, CH_QMARK, isDigit, MAX_PARAM_INDEX } from "./sql-tokens.js";

/** Numbers parameters the way sqlite3ExprAssignVarNumber does. */
class ParamCollector implements ParamSink {
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
    while (names.length < index) names.push(null);
    // Like sqlite3_bind_parameter_name, a ?NNN slot is named as written unless it already has a
    // name (a named parameter's index reused shares its slot, and the slot keeps that name).
    if (names[index - 1] === null) names[index - 1] = src.slice(start, end);
  }
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
