import type Database from "libsql";
import { withEmptyBlobs } from "./sql-tokens.js";
import { asciiLower, hasSequence, qualifiedName, type Word, wordsOf } from "./sql-words.js";
import type { StatementInfo } from "./statement-info.js";
import { type Schema, type SchemaEntry, schemaChange, type TableAction } from "./statement-schema.js";

export { EVERY_TABLE, type TableAction } from "./statement-schema.js";

/** One thing a statement does: an action on a table (lower case, as SQLite compares names). */
export interface TableUse {
  table: string;
  action: TableAction;
}

/** What running a statement does to which tables, read off the program SQLite compiled. */
export interface TableUses {
  uses: TableUse[];
  /** Set when the statement reaches what no table rule covers (another database, an unread schema change). */
  beyond?: string;
}

/** A row of EXPLAIN: addr, opcode, p1, p2, p3, p4, p5. */
type Op = [number, string, number, number, number, unknown, number];

/** sqlite_schema's own b-tree, which sqlite_schema doesn't list. */
const SCHEMA_ROOT = 1;
/** The temporary schema's database index (P3 of an open): 0 is main, 2 and up are attached. */
const TEMP_DB = 1;
/** OpenRead/OpenWrite P5 flag: P2 names a register holding the root (a table made by this statement). */
const P2_IS_REGISTER = 0x10;
/** Insert/Delete flag (P5 of Insert, P2 of Delete): the row change is half of an UPDATE. */
const IS_UPDATE = 0x04;
/** Opcodes only a schema change runs. */
const SCHEMA_OPCODES = new Set([
  "CreateBtree",
  "Destroy",
  "DropTable",
  "DropIndex",
  "DropTrigger",
  "ParseSchema",
  "VCreate",
  "VDestroy",
  "RenameTable",
]);

/**
 * Reads which tables a statement reads and changes from its bytecode (`EXPLAIN`), which lists the
 * programs of the triggers and foreign-key actions it fires after its own. A view or a CTE appears
 * as reads of the tables under it, a trigger as the changes its statements make: nothing a
 * statement reaches through the schema goes unseen. Schema changes are read from the statement's
 * words (statement-schema.ts); one the words don't account for is refused outright.
 *
 * Reads are `OpenRead` cursors on a table or one of its indexes. Changes are SQLite's own row
 * operations, which carry the table's name: `Insert` (half of an UPDATE when flagged so), `Delete`
 * (a REPLACE that removes a conflicting row is a delete), `Clear` (DELETE without WHERE); and, for
 * a WITHOUT ROWID table, index inserts and deletes on the table's own b-tree. Virtual tables
 * (FTS5, json_each, ...) can't be told apart in the program, so they count as every table.
 */
export function statementTables(
  db: Database.Database,
  info: StatementInfo,
  onDropped: (helper: object) => void,
): TableUses {
  if (info.isExplain) return { uses: [] };
  const words = wordsOf(info.sql);
  // A PRAGMA reads no rows; what it may change is decided on its form (and some can't be EXPLAINed).
  if (words[0]?.text === "pragma") return { uses: pragmaUses(info, words) };
  const schema = schemaOf(db, onDropped);
  const ddl = schemaChange(words, schema);
  if (ddl && "beyond" in ddl) return { uses: [], beyond: ddl.beyond };
  const found = new Uses();
  for (const use of ddl?.uses ?? []) found.add(use.table, use.action);
  const explain = db.prepare(`EXPLAIN ${withEmptyBlobs(info.sql)}`).raw(true);
  onDropped(explain);
  const ops = explain.all() as Op[];
  try {
    // The driver may leave an EXPLAIN "in progress" after its last row (see statement-program.ts).
    explain.get();
  } catch {
    // Nothing was left running.
  }
  const walk = new ProgramWalk(schema, found, words, ddl?.own, ddl?.alter === true);
  const beyond = walk.run(ops);
  if (beyond) return { uses: [], beyond };
  if (walk.changedSchema && !ddl)
    return { uses: [], beyond: "it changes the schema in a form the permission check doesn't read" };
  return { uses: found.list() };
}

/** PRAGMAs that go through every table's rows, answering with what they found (rowids among it). */
const SCANNING_PRAGMAS = new Set(["integrity_check", "quick_check", "foreign_key_check"]);

function pragmaUses(info: StatementInfo, words: Word[]): TableUse[] {
  // Setting a PRAGMA, or one that acts when read (optimize runs ANALYZE), changes the whole database.
  const name = qualifiedName(words, 1)?.name ?? "";
  if (info.kind === "write" || name === "optimize") return [{ table: "*", action: "schema_update" }];
  if (SCANNING_PRAGMAS.has(name)) return [{ table: "*", action: "data_read" }];
  // The rest read the schema (table_info, index_list, ...), which sqlite_schema shows anyway.
  return [];
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
    .prepare("SELECT rootpage, type, lower(name), lower(tbl_name), sql FROM main.sqlite_schema")
    .raw(true);
  onDropped(stmt);
  const rows = stmt.all() as Array<[number | null, string, string, string, string | null]>;
  const roots = new Map<number, SchemaEntry>([[SCHEMA_ROOT, { type: "table", tbl: "sqlite_schema" }]]);
  const owners = new Map<string, string>();
  const replacing = new Set<string>();
  for (const [root, type, name, tbl, sql] of rows) {
    if (root) roots.set(Number(root), { type, tbl });
    if (type === "index" || type === "trigger") owners.set(name, tbl);
    if (type === "table" && sql && hasSequence(wordsOf(sql), "conflict", "replace")) replacing.add(tbl);
  }
  return { roots, owners, replacing };
}

/**
 * Goes through the main program and each sub-program after it (their addresses start again at 0),
 * adding what each does. `own`: the table a schema change is about, whose rows it may read and
 * rewrite as part of that change; `alter`: an ALTER TABLE, whose checks also read the temporary
 * schema.
 */
class ProgramWalk {
  /** Whether the main program runs what only a schema change runs. */
  changedSchema = false;
  private words: Word[];
  private cursors = new Map<number, SchemaEntry>();
  private main = true;
  private returning = false;
  private readonly mainWrites = new Set<string>();
  /** An outer OR REPLACE applies to the statements of the triggers it fires too. */
  private readonly outerReplace: boolean;

  constructor(
    private readonly schema: Schema,
    private readonly found: Uses,
    mainWords: Word[],
    private readonly own: string | undefined,
    private readonly alter: boolean,
  ) {
    this.words = mainWords;
    this.outerReplace = mayReplace(mainWords);
  }

  /** Returns why the statement reaches beyond table rules, if it does. */
  run(ops: Op[]): string | undefined {
    for (let i = 0; i < ops.length; i++) {
      const [addr, opcode, p1, p2, p3, p4, p5] = ops[i]!;
      if (addr === 0 && i > 0) {
        // A trigger's or a foreign-key action's program: its text comes with its Trace rows.
        this.words = [];
        this.cursors = new Map();
        this.main = false;
      }
      if (
        this.main &&
        (SCHEMA_OPCODES.has(opcode) || (opcode === "OpenWrite" && p2 === SCHEMA_ROOT && p3 === 0))
      )
        this.changedSchema = true;
      if (opcode === "ResultRow" && this.main) this.returning = true;
      const beyond = this.op(opcode, p1, p2, p3, p4, p5);
      if (beyond) return beyond;
    }
    // RETURNING hands back the rows the statement changed: reading them.
    if (this.returning) for (const table of this.mainWrites) this.found.add(table, "data_read");
    return undefined;
  }

  private op(
    opcode: string,
    p1: number,
    p2: number,
    p3: number,
    p4: unknown,
    p5: number,
  ): string | undefined {
    switch (opcode) {
      case "Trace":
        if (typeof p4 === "string") this.words = wordsOf(p4.replace(/^--/, ""));
        return undefined;
      case "OpenRead":
      case "OpenWrite":
      case "ReopenIdx":
        return this.open(opcode, p1, p2, p3, p5);
      case "Insert":
      case "Delete":
      case "Clear":
        if (typeof p4 === "string" && asciiLower(p4) !== this.own) {
          const table = asciiLower(p4);
          for (const action of rowChange(opcode, p2, p5, this.replaces(table))) this.write(table, action);
        }
        return undefined;
      case "IdxInsert":
      case "IdxDelete": {
        const entry = this.cursors.get(p1);
        // An index insert on a table's own b-tree is a WITHOUT ROWID table's row change.
        if (entry?.type === "table" && entry.tbl !== this.own && !entry.tbl.startsWith("sqlite_"))
          for (const action of withoutRowidActions(this.words, this.replaces(entry.tbl)))
            this.write(entry.tbl, action);
        return undefined;
      }
      case "VOpen":
        // ALTER TABLE checks the table's rows through pragma_quick_check: part of the change.
        if (!this.alter) this.found.add("*", "data_read");
        return undefined;
      case "VUpdate":
        this.found.add("*", "data_add").add("*", "data_update").add("*", "data_delete");
        return undefined;
    }
    return undefined;
  }

  private open(opcode: string, p1: number, p2: number, p3: number, p5: number): string | undefined {
    if (p3 !== 0) {
      if (this.alter && p3 === TEMP_DB) return undefined;
      return "it reaches a database other than main (a temporary table or an attached database)";
    }
    if (p5 & P2_IS_REGISTER) return undefined;
    const entry = this.schema.roots.get(p2);
    if (!entry) return this.own !== undefined ? undefined : "it opens a b-tree the schema doesn't name";
    if (opcode === "OpenWrite") this.cursors.set(p1, entry);
    else if (entry.tbl !== this.own && !entry.tbl.startsWith("sqlite_"))
      this.found.add(entry.tbl, "data_read");
    return undefined;
  }

  private write(table: string, action: TableAction): void {
    this.found.add(table, action);
    if (this.main) this.mainWrites.add(table);
  }

  /** Whether a change to `table` here may replace rows: OR REPLACE, an upsert, or the table's own constraints. */
  private replaces(table: string): boolean {
    return this.outerReplace || mayReplace(this.words) || this.schema.replacing.has(table);
  }
}

/**
 * What SQLite's row operation on a rowid table is: `Insert` (half of an UPDATE when flagged so),
 * `Delete` (the other half of an UPDATE, or a row removed by DELETE or by a REPLACE making room),
 * `Clear` (DELETE without WHERE). Where rows may be replaced, an insert may overwrite a row (an
 * update) and an update may overwrite another (a delete), with no other operation to show it.
 */
function rowChange(opcode: string, p2: number, p5: number, replaces: boolean): TableAction[] {
  if (opcode === "Insert") {
    if (p5 & IS_UPDATE) return replaces ? ["data_update", "data_delete"] : ["data_update"];
    return replaces ? ["data_add", "data_update"] : ["data_add"];
  }
  if (opcode === "Delete" && p2 & IS_UPDATE) return ["data_update"];
  return ["data_delete"];
}

/** An INSERT that may overwrite a row, or an UPDATE another: OR REPLACE, REPLACE INTO, an upsert's DO UPDATE. */
function mayReplace(words: readonly Word[]): boolean {
  return (
    hasSequence(words, "or", "replace") ||
    hasSequence(words, "replace", "into") ||
    hasSequence(words, "do", "update")
  );
}

/** What a row change on a WITHOUT ROWID table is, told by the statement it belongs to. */
function withoutRowidActions(words: readonly Word[], replaces: boolean): TableAction[] {
  const verb = dmlVerb(words);
  if (verb === "update") return replaces ? ["data_update", "data_delete"] : ["data_update"];
  if (verb === "delete") return ["data_delete"];
  if (verb === "insert") return replaces ? ["data_add", "data_update"] : ["data_add"];
  return ["data_add", "data_update", "data_delete"];
}

/** The statement's verb: its first INSERT, UPDATE or DELETE keyword (a WITH clause holds only SELECTs). */
function dmlVerb(words: readonly Word[]): "insert" | "update" | "delete" | undefined {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w.kind !== "word") continue;
    if (w.text === "insert" || w.text === "update" || w.text === "delete") return w.text;
    // REPLACE INTO is an insert; replace( is the function.
    if (w.text === "replace" && words[i + 1]?.kind === "word" && words[i + 1]!.text === "into")
      return "insert";
  }
  return undefined;
}
