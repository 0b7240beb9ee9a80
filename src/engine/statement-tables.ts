import type Database from "libsql";
import { withEmptyBlobs } from "./sql-tokens.js";
import type { StatementInfo } from "./statement-info.js";

/** What a statement may do to a table, in Turso's words (fine-grained token permissions). */
export type TableAction =
  | "data_read"
  | "data_add"
  | "data_update"
  | "data_delete"
  | "schema_add"
  | "schema_update"
  | "schema_delete";

/** `*`: every table, for what can't be pinned to one (a virtual table, VACUUM). */
export const EVERY_TABLE = "*";

/** One thing a statement does: an action on a table (lower case, as SQLite compares names). */
export interface TableUse {
  table: string;
  action: TableAction;
}

/** What running a statement does to which tables, read off the program SQLite compiled. */
export interface TableUses {
  uses: TableUse[];
  /** Set when the program reaches another database (temp, ATTACH), which no table rule covers. */
  beyond?: string;
}

interface SchemaEntry {
  type: string;
  tbl: string;
}

interface Schema {
  /** Every b-tree's root page to what it stores. */
  roots: Map<number, SchemaEntry>;
  /** Every index's and trigger's name to the table it is on. */
  owners: Map<string, string>;
}

/** A row of EXPLAIN: addr, opcode, p1, p2, p3, p4, p5. */
type Op = [number, string, number, number, number, unknown, number];

/** sqlite_schema's own b-tree, which sqlite_schema doesn't list. */
const SCHEMA_ROOT = 1;
/** OpenRead/OpenWrite P5 flag: P2 names a register holding the root (a table made by this statement). */
const P2_IS_REGISTER = 0x10;
/** Insert/Delete flag (P5 of Insert, P2 of Delete): the row change is half of an UPDATE. */
const IS_UPDATE = 0x04;

const IDENT = String.raw`(?:"(?:[^"]|"")+"|\x60[^\x60]+\x60|\[[^\]]+\]|'(?:[^']|'')+'|[^\s.(;]+)`;
const NAME = new RegExp(String.raw`^(?:(${IDENT})\s*\.\s*)?(${IDENT})`);
const CREATE =
  /^create\s+(temp\s+|temporary\s+)?(?:unique\s+)?(table|view|index|trigger|virtual\s+table)\s+(?:if\s+not\s+exists\s+)?/i;
const DROP = /^drop\s+(table|view|index|trigger)\s+(?:if\s+exists\s+)?/i;
const ALTER = /^alter\s+table\s+/i;
const ON_TABLE = new RegExp(String.raw`\bon\s+(?:(${IDENT})\s*\.\s*)?(${IDENT})`, "i");

/**
 * Reads which tables a statement reads and changes from its bytecode (`EXPLAIN`), which lists the
 * programs of the triggers and foreign-key actions it fires after its own. A view or a CTE appears
 * as reads of the tables under it, a trigger as the changes its statements make: nothing a
 * statement reaches through the schema goes unseen. Schema changes are read from the statement's
 * text, the table they change being the one named (an index's or trigger's: the table it is on).
 *
 * Reads are `OpenRead` cursors on a table or one of its indexes. Changes are SQLite's own row
 * operations, which carry the table's name: `Insert` (half of an UPDATE when flagged so), `Delete`
 * (a REPLACE that removes a conflicting row is a delete), `Clear` (DELETE without WHERE); and, for
 * a WITHOUT ROWID table, index inserts and deletes on the table's own b-tree.
 */
export function statementTables(
  db: Database.Database,
  info: StatementInfo,
  onDropped: (helper: object) => void,
): TableUses {
  if (info.isExplain) return { uses: [] };
  const explain = db.prepare(`EXPLAIN ${withEmptyBlobs(info.sql)}`).raw(true);
  onDropped(explain);
  const ops = explain.all() as unknown[][];
  try {
    // The driver may leave an EXPLAIN "in progress" after its last row (see statement-program.ts).
    explain.get();
  } catch {
    // Nothing was left running.
  }
  const schema = schemaOf(db, onDropped);
  const found = new Uses();
  const ddl = schemaChange(info, schema);
  if (ddl) {
    if ("beyond" in ddl) return { uses: [], beyond: ddl.beyond };
    found.add(ddl.table, ddl.action);
  }
  const beyond = walkProgram(
    ops,
    schema.roots,
    info.sql,
    found,
    ddl && "table" in ddl ? ddl.table : undefined,
  );
  return beyond ? { uses: [], beyond } : { uses: found.list() };
}

class Uses {
  private readonly seen = new Map<string, TableUse>();
  add(table: string, action: TableAction): this {
    const key = `${action} ${table}`;
    if (!this.seen.has(key)) this.seen.set(key, { table, action });
    return this;
  }
  list(): TableUse[] {
    return [...this.seen.values()];
  }
}

function schemaOf(db: Database.Database, onDropped: (helper: object) => void): Schema {
  const stmt = db
    .prepare("SELECT rootpage, type, lower(name), lower(tbl_name) FROM main.sqlite_schema")
    .raw(true);
  onDropped(stmt);
  const rows = stmt.all() as Array<[number | null, string, string, string]>;
  const roots = new Map<number, SchemaEntry>([[SCHEMA_ROOT, { type: "table", tbl: "sqlite_schema" }]]);
  const owners = new Map<string, string>();
  for (const [root, type, name, tbl] of rows) {
    if (root) roots.set(Number(root), { type, tbl });
    if (type === "index" || type === "trigger") owners.set(name, tbl);
  }
  return { roots, owners };
}

/**
 * Goes through the main program and each sub-program after it (their addresses start again at 0),
 * adding what each does. `own`: the table a schema change is about, whose rows it may read and
 * rewrite as part of that change. Returns why the statement reaches beyond table rules, if it does.
 */
function walkProgram(
  ops: unknown[][],
  schema: Map<number, SchemaEntry>,
  mainSql: string,
  found: Uses,
  own: string | undefined,
): string | undefined {
  let text = mainSql;
  let cursors = new Map<number, SchemaEntry>();
  let main = true;
  let returning = false;
  const mainWrites = new Set<string>();
  const write = (table: string, action: TableAction) => {
    found.add(table, action);
    if (main) mainWrites.add(table);
  };
  for (let i = 0; i < ops.length; i++) {
    const [addr, opcode, p1, p2, p3, p4, p5] = ops[i] as Op;
    if (addr === 0 && i > 0) {
      // A trigger's or a foreign-key action's program: its text comes with its Trace rows.
      text = "";
      cursors = new Map();
      main = false;
    }
    if (opcode === "ResultRow" && main) returning = true;
    switch (opcode) {
      case "Trace":
        if (typeof p4 === "string") text = p4.replace(/^--\s*/, "");
        break;
      case "OpenRead":
      case "OpenWrite":
      case "ReopenIdx": {
        if (p3 !== 0)
          return "it reaches a database other than main (a temporary table or an attached database)";
        if (p5 & P2_IS_REGISTER) break;
        const entry = schema.get(p2);
        if (!entry) {
          if (own !== undefined) break;
          return "it opens a b-tree the schema doesn't name";
        }
        if (opcode === "OpenWrite") cursors.set(p1, entry);
        else if (entry.tbl !== own && !entry.tbl.startsWith("sqlite_")) found.add(entry.tbl, "data_read");
        break;
      }
      case "Insert":
      case "Delete":
      case "Clear":
        if (typeof p4 === "string" && p4.toLowerCase() !== own)
          for (const action of rowChange(opcode, p2, p5, text)) write(p4.toLowerCase(), action);
        break;
      case "IdxInsert":
      case "IdxDelete": {
        const entry = cursors.get(p1);
        // An index insert on a table's own b-tree is a WITHOUT ROWID table's row change.
        if (entry?.type === "table" && entry.tbl !== own && !entry.tbl.startsWith("sqlite_"))
          for (const action of withoutRowidActions(text, opcode)) write(entry.tbl, action);
        break;
      }
      case "VOpen":
        found.add(EVERY_TABLE, "data_read");
        break;
      case "VUpdate":
        found.add(EVERY_TABLE, "data_add").add(EVERY_TABLE, "data_update").add(EVERY_TABLE, "data_delete");
        break;
    }
  }
  // RETURNING hands back the rows the statement changed: reading them.
  if (returning) for (const table of mainWrites) found.add(table, "data_read");
  return undefined;
}

/**
 * What SQLite's row operation on a rowid table is: `Insert` (half of an UPDATE when flagged so;
 * an insert that may overwrite also updates), `Delete` (the other half of an UPDATE, or a row
 * removed, by DELETE or by REPLACE making room), `Clear` (DELETE without WHERE).
 */
function rowChange(opcode: string, p2: number, p5: number, text: string): TableAction[] {
  if (opcode === "Insert") {
    if (p5 & IS_UPDATE) return ["data_update"];
    return mayReplace(text) ? ["data_add", "data_update"] : ["data_add"];
  }
  if (opcode === "Delete" && p2 & IS_UPDATE) return ["data_update"];
  return ["data_delete"];
}

/** An INSERT that may overwrite a row: REPLACE, or an upsert's DO UPDATE. */
function mayReplace(text: string): boolean {
  return /^\s*replace\b|\binsert\s+or\s+replace\b|\bdo\s+update\b/i.test(text);
}

/** What a row change on a WITHOUT ROWID table is, told by the statement it belongs to. */
function withoutRowidActions(text: string, opcode: string): TableAction[] {
  const verb = /^\s*(?:with\b[\s\S]*?\)\s*)?(insert|replace|update|delete)\b/i.exec(text)?.[1]?.toLowerCase();
  if (verb === "update") return ["data_update"];
  if (verb === "delete") return ["data_delete"];
  if (verb === "insert" || verb === "replace")
    return opcode === "IdxDelete" || mayReplace(text) ? ["data_add", "data_update"] : ["data_add"];
  return ["data_add", "data_update", "data_delete"];
}

function unquote(name: string): string {
  const q = name[0];
  if (q === '"' || q === "'")
    return name
      .slice(1, -1)
      .replaceAll(q + q, q)
      .toLowerCase();
  if (q === "`" || q === "[") return name.slice(1, -1).toLowerCase();
  return name.toLowerCase();
}

/** The schema a qualified name is in; undefined for main (or no qualifier). */
function otherSchema(qualifier: string | undefined): boolean {
  return qualifier !== undefined && unquote(qualifier) !== "main";
}

type SchemaChange = { table: string; action: TableAction } | { beyond: string };

/** The schema action a DDL statement is, on which table; undefined for anything else. */
function schemaChange(info: StatementInfo, schema: Schema): SchemaChange | undefined {
  const sql = info.sql;
  const temp = { beyond: "it changes the temporary schema or an attached database's" };
  let m = CREATE.exec(sql);
  if (m) {
    const name = NAME.exec(sql.slice(m[0].length));
    if (m[1] || !name || otherSchema(name[1])) return temp;
    const kind = m[2]!.toLowerCase();
    if (kind !== "index" && kind !== "trigger") return { table: unquote(name[2]!), action: "schema_add" };
    const on = ON_TABLE.exec(sql.slice(m[0].length + name[0].length));
    if (!on || otherSchema(on[1])) return temp;
    return { table: unquote(on[2]!), action: "schema_update" };
  }
  m = DROP.exec(sql);
  if (m) {
    const name = NAME.exec(sql.slice(m[0].length));
    if (!name || otherSchema(name[1])) return temp;
    const kind = m[1]!.toLowerCase();
    if (kind === "table" || kind === "view") return { table: unquote(name[2]!), action: "schema_delete" };
    // Dropping an index or trigger changes its table; one that doesn't exist changes nothing.
    const owner = schema.owners.get(unquote(name[2]!));
    return owner ? { table: owner, action: "schema_update" } : undefined;
  }
  m = ALTER.exec(sql);
  if (m) {
    const name = NAME.exec(sql.slice(m[0].length));
    if (!name || otherSchema(name[1])) return temp;
    return { table: unquote(name[2]!), action: "schema_update" };
  }
  // What rebuilds or rewrites every table, and PRAGMAs that set something, cover all of them.
  if (/^(vacuum|reindex|analyze)\b/i.test(sql) || (info.kind === "write" && /^pragma\b/i.test(sql)))
    return { table: EVERY_TABLE, action: "schema_update" };
  return undefined;
}
