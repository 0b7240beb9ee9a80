import type { EngineConnection, SqlValue } from "./connection.js";

/** Quotes an identifier for SQL: always, so keywords and odd characters need no special case. */
function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A token for a line-break character that doesn't occur in `text` (the dump's `replace()` marker). */
function unusedToken(text: string, first: string, second: string): string {
  if (!text.includes(first)) return first;
  if (!text.includes(second)) return second;
  for (let i = 0; ; i++) if (!text.includes(`(${first}${i})`)) return `(${first}${i})`;
}

/**
 * A text value as a SQL literal. Line breaks are written as `replace(..., char(10))`, as sqlite3's
 * `.dump` does, so every statement of a dump stays on one line and line-based tools can cut it.
 */
export function textLiteral(text: string): string {
  let body = text.replace(/'/g, "''");
  let literal: string;
  const nl = text.includes("\n") ? unusedToken(text, "\\n", "\\012") : undefined;
  const cr = text.includes("\r") ? unusedToken(text, "\\r", "\\015") : undefined;
  if (nl) body = body.split("\n").join(nl);
  if (cr) body = body.split("\r").join(cr);
  literal = `'${body}'`;
  if (cr) literal = `replace(${literal},'${cr}',char(13))`;
  if (nl) literal = `replace(${literal},'${nl}',char(10))`;
  return literal;
}

/** One value as a SQL literal that reads back as the same value with the same type. */
export function valueLiteral(v: SqlValue): string {
  if (v === null) return "NULL";
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "NULL";
    if (!Number.isFinite(v)) return v > 0 ? "1e999" : "-1e999";
    const s = String(v);
    // A REAL must keep its type: 5.0 written as "5" would come back an INTEGER.
    return /[.eE]/.test(s) ? s : `${s}.0`;
  }
  if (typeof v === "string") return textLiteral(v);
  return `X'${Buffer.from(v).toString("hex")}'`;
}

/** The INSERT prefix for a table's rows, and the SELECT that reads them. */
function rowStatements(conn: EngineConnection, table: string): { insert: string; select: string } {
  // table_xinfo's `hidden` is 2 or 3 for generated columns, which an INSERT can't set; 1 marks a
  // virtual table's hidden column (no rows are dumped for those anyway).
  const info = [...conn.rows("SELECT name, hidden FROM pragma_table_xinfo(?)", [table])];
  const stored = info.filter((c) => Number(c[1]) === 0).map((c) => ident(String(c[0])));
  const generated = stored.length !== info.length;
  const columns = generated ? `(${stored.join(",")})` : "";
  return {
    insert: `INSERT INTO ${ident(table)}${columns} VALUES(`,
    select: `SELECT ${stored.join(",")} FROM ${ident(table)}`,
  };
}

/**
 * The database as SQL text in sqlite3's `.dump` format, one statement per line: tables with their
 * rows, then indexes, triggers and views, inside one transaction. Everything is read in a single
 * read transaction on `conn`, so the dump is one consistent snapshot while writers carry on (WAL);
 * the caller must give the connection back (which ends the transaction) when done.
 */
export function* dumpDatabase(conn: EngineConnection): Generator<string> {
  conn.exec("BEGIN");
  yield "PRAGMA foreign_keys=OFF;\n";
  yield "BEGIN TRANSACTION;\n";
  let writableSchema = false;
  const tables = [
    ...conn.rows(
      "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql NOT NULL ORDER BY tbl_name = 'sqlite_sequence', rowid",
    ),
  ].map((r) => ({ name: String(r[0]), sql: String(r[1]) }));
  for (const { name, sql } of tables) {
    if (name === "sqlite_sequence") yield "DELETE FROM sqlite_sequence;\n";
    else if (name.startsWith("sqlite_stat")) {
      yield "ANALYZE sqlite_schema;\n";
      continue;
    } else if (name.startsWith("sqlite_")) continue;
    else if (/^create\s+virtual\s+table/i.test(sql)) {
      // A virtual table's rows live in its shadow tables, dumped as ordinary tables; the table
      // itself is written straight into the schema so that creating it doesn't build them twice.
      if (!writableSchema) yield "PRAGMA writable_schema=ON;\n";
      writableSchema = true;
      const n = textLiteral(name);
      yield `INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table',${n},${n},0,${textLiteral(sql)});\n`;
      continue;
    } else yield `${sql};\n`;
    const { insert, select } = rowStatements(conn, name);
    for (const row of conn.rows(select)) yield `${insert}${row.map(valueLiteral).join(",")});\n`;
  }
  for (const r of conn.rows(
    "SELECT sql FROM sqlite_schema WHERE sql NOT NULL AND type IN ('index', 'trigger', 'view') ORDER BY rowid",
  )) {
    yield `${String(r[0])};\n`;
  }
  if (writableSchema) yield "PRAGMA writable_schema=OFF;\n";
  yield "COMMIT;\n";
  conn.exec("COMMIT");
}
