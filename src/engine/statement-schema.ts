import { qualifiedName, type Word } from "./sql-words.js";

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

export interface SchemaEntry {
  type: string;
  tbl: string;
}

/** What the checks need of the database's schema. */
export interface Schema {
  /** Every b-tree's root page to what it stores. */
  roots: Map<number, SchemaEntry>;
  /** Every index's and trigger's name to the table it is on. */
  owners: Map<string, string>;
  /** Tables whose own constraints resolve conflicts by REPLACE (a plain INSERT may overwrite). */
  replacing: Set<string>;
}

/** A schema change: what it needs, the table it is about (`own`), and whether it is an ALTER TABLE. */
export type SchemaChange =
  | { uses: Array<{ table: string; action: TableAction }>; own: string; alter?: boolean }
  | { beyond: string };

const OTHER_SCHEMA = { beyond: "it changes the temporary schema or an attached database's" };
const DATA_ACTIONS: TableAction[] = ["data_read", "data_add", "data_update", "data_delete"];

const isWord = (w: Word | undefined, ...texts: string[]) => w?.kind === "word" && texts.includes(w.text);

/**
 * The schema action a statement is, read from its words (so no comment can hide a keyword):
 * CREATE TABLE or VIEW is `schema_add` on the new name, DROP TABLE or VIEW `schema_delete`, and
 * what changes an existing table (ALTER TABLE, an index or a trigger on it, created or dropped)
 * `schema_update` on that table; VACUUM, REINDEX and ANALYZE rewrite every table. A trigger runs
 * with the rights of whoever fires it, so creating one also needs every data action on every
 * table: otherwise it would hand the token the rights of the database's other writers.
 * Undefined for a statement that isn't a schema change.
 */
export function schemaChange(words: Word[], schema: Schema): SchemaChange | undefined {
  const verb = words[0]?.kind === "word" ? words[0].text : "";
  // A blob literal kept in the schema (a view, a default) ends the process reading a later
  // statement's program listing (the driver can't read it back): not from a limited token.
  if (
    (verb === "create" || verb === "alter") &&
    words.some((w) => w.kind === "string" && /^x'/i.test(w.text))
  )
    return { beyond: "it keeps a blob literal (x'...') in the schema" };
  if (verb === "create") return create(words);
  if (verb === "drop") return drop(words, schema);
  if (verb === "alter" && isWord(words[1], "table")) return alter(words);
  if (verb === "reindex" || verb === "analyze") {
    // One table (or one index's table) when named; every table otherwise.
    const name = qualifiedName(words, 1);
    const table =
      name && (name.schema === undefined || name.schema === "main")
        ? (schema.owners.get(name.name) ?? name.name)
        : undefined;
    if (table) return { uses: [{ table, action: "schema_update" }], own: table };
  }
  if (verb === "vacuum" || verb === "reindex" || verb === "analyze")
    return { uses: [{ table: EVERY_TABLE, action: "schema_update" }], own: EVERY_TABLE };
  return undefined;
}

/**
 * ALTER TABLE changes its table; RENAME TO also takes the new name (schema_add) and gives up the
 * old one (schema_delete): rights held on a name that doesn't exist yet mustn't come to cover a
 * table renamed to it.
 */
function alter(words: Word[]): SchemaChange {
  const name = qualifiedName(words, 2);
  if (!name || (name.schema !== undefined && name.schema !== "main")) return OTHER_SCHEMA;
  const uses: Array<{ table: string; action: TableAction }> = [{ table: name.name, action: "schema_update" }];
  if (isWord(words[name.next], "rename") && isWord(words[name.next + 1], "to")) {
    const to = qualifiedName(words, name.next + 2);
    if (!to) return { beyond: "it renames a table to a name the permission check can't read" };
    uses.push({ table: name.name, action: "schema_delete" }, { table: to.name, action: "schema_add" });
  }
  return { uses, own: name.name, alter: true };
}

function create(words: Word[]): SchemaChange {
  let i = 1;
  if (isWord(words[i], "temp", "temporary")) return OTHER_SCHEMA;
  if (isWord(words[i], "unique")) i++;
  let kind = words[i]?.kind === "word" ? words[i]!.text : "";
  if (kind === "virtual" && isWord(words[i + 1], "table")) {
    kind = "table";
    i++;
  }
  i++;
  if (isWord(words[i], "if") && isWord(words[i + 1], "not") && isWord(words[i + 2], "exists")) i += 3;
  const name = qualifiedName(words, i);
  if (!name || (name.schema !== undefined && name.schema !== "main")) return OTHER_SCHEMA;
  if (kind === "table" || kind === "view")
    return { uses: [{ table: name.name, action: "schema_add" }], own: name.name };
  if (kind !== "index" && kind !== "trigger")
    return { beyond: "it creates something the permission check doesn't know" };
  // The table it is on follows the first ON (comments are gone, and a column called "on" is quoted).
  const on = words.findIndex((w, j) => j >= name.next && isWord(w, "on"));
  const table = on < 0 ? undefined : qualifiedName(words, on + 1);
  if (!table || (table.schema !== undefined && table.schema !== "main")) return OTHER_SCHEMA;
  const uses: Array<{ table: string; action: TableAction }> = [
    { table: table.name, action: "schema_update" },
  ];
  if (kind === "trigger") for (const action of DATA_ACTIONS) uses.push({ table: EVERY_TABLE, action });
  return { uses, own: table.name };
}

function drop(words: Word[], schema: Schema): SchemaChange | undefined {
  const kind = words[1]?.kind === "word" ? words[1].text : "";
  let i = 2;
  if (isWord(words[i], "if") && isWord(words[i + 1], "exists")) i += 2;
  const name = qualifiedName(words, i);
  if (!name || (name.schema !== undefined && name.schema !== "main")) return OTHER_SCHEMA;
  if (kind === "table" || kind === "view")
    return { uses: [{ table: name.name, action: "schema_delete" }], own: name.name };
  if (kind !== "index" && kind !== "trigger")
    return { beyond: "it drops something the permission check doesn't know" };
  // Dropping an index or trigger changes its table; one the schema doesn't name can't be judged.
  const owner = schema.owners.get(name.name);
  if (!owner) return { beyond: `it drops ${kind} ${name.name}, which the schema doesn't name` };
  return { uses: [{ table: owner, action: "schema_update" }], own: owner };
}
