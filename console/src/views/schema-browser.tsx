import { useEffect, useState } from "preact/hooks";
import { runStatements, type Value } from "../hrana.js";
import { ErrorNote, Section } from "../ui/kit.js";

interface TableInfo {
  name: string;
  kind: string;
  columns: Array<{ name: string; type: string }>;
  indexes: string[];
}

/** Tables and views with their columns, and each table's indexes; SQLite's and libSQL's own left out. */
const SCHEMA = `SELECT m.type, m.name, p.name, p.type, NULL FROM sqlite_schema m
  JOIN pragma_table_info(m.name) p
  WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND m.name NOT LIKE 'libsql\\_%' ESCAPE '\\'
UNION ALL
SELECT 'index', tbl_name, NULL, NULL, name FROM sqlite_schema
  WHERE type = 'index' AND tbl_name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND tbl_name NOT LIKE 'libsql\\_%' ESCAPE '\\'`;

const text = (v: Value | undefined) => (v && v.type !== "null" && "value" in v ? String(v.value) : "");

function tablesOf(rows: Value[][]): TableInfo[] {
  const byName = new Map<string, TableInfo>();
  for (const [kind, table, column, type, index] of rows) {
    const name = text(table);
    let t = byName.get(name);
    if (!t) {
      t = { name, kind: "table", columns: [], indexes: [] };
      byName.set(name, t);
    }
    if (text(kind) === "index") t.indexes.push(text(index));
    else {
      t.kind = text(kind);
      t.columns.push({ name: text(column), type: text(type) });
    }
  }
  return [...byName.values()]
    .filter((t) => t.columns.length > 0)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The database's tables, views, columns and indexes beside the editor, read through the same
 * short-lived token the editor uses; a name clicked is put into the statements. `version` changes
 * after each run, which may have changed the schema.
 */
export function SchemaBrowser(props: {
  base: string;
  org: string;
  db: string;
  version: number;
  onInsert: (name: string) => void;
}) {
  const [tables, setTables] = useState<TableInfo[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let live = true;
    runStatements(props.base, props.org, props.db, [SCHEMA]).then(
      ([o]) => {
        if (!live) return;
        if (o?.result) setTables(tablesOf(o.result.rows));
        setError(o?.error?.message);
      },
      (e: unknown) => live && setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [props.base, props.version]);
  const name = (n: string) => (
    <button type="button" class="link-button mono" onClick={() => props.onInsert(n)}>
      {n}
    </button>
  );
  return (
    <Section title="Tables">
      <ErrorNote message={error} />
      {tables?.length === 0 && <p class="hint">No tables yet.</p>}
      <ul class="schema">
        {tables?.map((t) => (
          <li key={t.name}>
            {name(t.name)}
            {t.kind === "view" && <span class="hint"> view</span>}
            <ul>
              {t.columns.map((c) => (
                <li key={c.name}>
                  {name(c.name)} <span class="hint">{c.type || "no declared type"}</span>
                </li>
              ))}
              {t.indexes.map((i) => (
                <li key={i}>
                  <span class="hint">index</span> {name(i)}
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
    </Section>
  );
}
