import { useState } from "preact/hooks";
import { useOrg } from "../context.js";
import { count } from "../format.js";
import { useAction } from "../hooks.js";
import { runStatements, type StepOutcome, type Value } from "../hrana.js";
import { href } from "../router.js";
import { splitStatements } from "../sql-split.js";
import { Button, ErrorNote, Field, ScrollRegion, Section } from "../ui/kit.js";
import { databasePath } from "./databases.js";
import { SchemaBrowser } from "./schema-browser.js";

interface HistoryEntry {
  sql: string;
  at: string;
  ok: boolean;
}
const HISTORY_MAX = 50;
/** The history stays in this tab, like the token: statements can hold data. */
const historyKey = (org: string, db: string) => `shoal.console.sql.${org}/${db}`;
function loadHistory(key: string): HistoryEntry[] {
  try {
    return JSON.parse(sessionStorage.getItem(key) ?? "[]") as HistoryEntry[];
  } catch {
    return [];
  }
}

export function SqlEditor({ name }: { name: string }) {
  const { org, canWrite } = useOrg();
  const base = databasePath(org.slug, name);
  const key = historyKey(org.slug, name);
  const [sql, setSql] = useState("");
  const [outcomes, setOutcomes] = useState<StepOutcome[]>([]);
  const [history, setHistory] = useState<HistoryEntry[]>(() => loadHistory(key));
  const action = useAction();
  // Bumped after each run, which may have changed the schema the browser shows.
  const [runs, setRuns] = useState(0);
  const run = async () => {
    const statements = splitStatements(sql);
    if (statements.length === 0) return;
    const done = await action.run(() => runStatements(base, org.slug, name, statements));
    setOutcomes(done ?? []);
    setRuns((n) => n + 1);
    const entry = {
      sql: sql.trim(),
      at: new Date().toISOString(),
      ok: !!done && done.every((o) => o.result),
    };
    const next = [entry, ...history.filter((h) => h.sql !== entry.sql)].slice(0, HISTORY_MAX);
    setHistory(next);
    sessionStorage.setItem(key, JSON.stringify(next));
  };
  return (
    <>
      <p class="crumbs">
        <a href={href("orgs", org.slug, "databases")}>Databases</a> /{" "}
        <a href={href("orgs", org.slug, "databases", name)}>{name}</a> /
      </p>
      <h1>SQL editor</h1>
      {!canWrite ? (
        <p class="notice">
          Viewers can't run SQL here: the editor uses a database token, and only members, admins and owners
          may mint one.
        </p>
      ) : (
        <>
          <div class="sql-layout">
            <Section title={`Run SQL on ${name}`}>
              <EditorForm sql={sql} busy={action.busy} onChange={setSql} onRun={() => void run()} />
              <ErrorNote message={action.error} />
            </Section>
            <SchemaBrowser
              base={base}
              org={org.slug}
              db={name}
              version={runs}
              onInsert={(word) => setSql((s) => (s === "" || /\s$/.test(s) ? `${s}${word}` : `${s} ${word}`))}
            />
          </div>
          {outcomes.length > 0 && (
            <Section title="Results">
              {outcomes.map((o, i) => (
                <Outcome key={`${i}-${o.sql}`} o={o} />
              ))}
            </Section>
          )}
          <History entries={history} onPick={setSql} />
        </>
      )}
    </>
  );
}

function EditorForm(props: {
  sql: string;
  busy: boolean;
  onChange: (sql: string) => void;
  onRun: () => void;
}) {
  return (
    <form
      class="stack-form"
      onSubmit={(e) => {
        e.preventDefault();
        props.onRun();
      }}
    >
      <Field label="Statements" hint="Separate statements with semicolons. Ctrl+Enter runs them.">
        <textarea
          class="mono editor"
          rows={8}
          spellcheck={false}
          value={props.sql}
          onInput={(e) => props.onChange(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              props.onRun();
            }
          }}
        />
      </Field>
      <div class="row">
        <Button type="submit" kind="primary" busy={props.busy}>
          {props.busy ? "Running…" : "Run"}
        </Button>
        <span class="hint">Runs with a database token that expires after 15 minutes.</span>
      </div>
    </form>
  );
}

/** Statements run in this tab, newest first; one click puts a statement back in the editor. */
function History({ entries, onPick }: { entries: HistoryEntry[]; onPick: (sql: string) => void }) {
  return (
    <Section title="History">
      {entries.length === 0 && <p class="hint">Nothing run yet in this tab.</p>}
      <ol class="history">
        {entries.map((h) => (
          <li key={h.at}>
            <button
              type="button"
              class="link mono"
              onClick={() => onPick(h.sql)}
              title="Put back in the editor"
            >
              {h.sql.length > 120 ? `${h.sql.slice(0, 120)}…` : h.sql}
            </button>
            <span class="hint">
              {" "}
              {new Date(h.at).toLocaleTimeString("en")} · {h.ok ? "ok" : "failed"}
            </span>
          </li>
        ))}
      </ol>
    </Section>
  );
}

/**
 * The stored type a column's declared type leads one to expect (SQLite's type affinity), or
 * undefined where any type is as likely (no declared type, BLOB, NUMERIC).
 */
function expectedType(decltype: string | null | undefined): Value["type"] | undefined {
  const d = (decltype ?? "").toUpperCase();
  if (d.includes("INT")) return "integer";
  if (d.includes("CHAR") || d.includes("CLOB") || d.includes("TEXT")) return "text";
  if (d.includes("REAL") || d.includes("FLOA") || d.includes("DOUB")) return "float";
  return undefined;
}

function cell(v: Value): string {
  switch (v.type) {
    case "null":
      return "NULL";
    case "blob": {
      const n = Math.floor((v.base64.replace(/=+$/, "").length * 3) / 4);
      return `blob, ${n} byte${n === 1 ? "" : "s"}`;
    }
    default:
      return String(v.value);
  }
}

function Outcome({ o }: { o: StepOutcome }) {
  const head = <pre class="code stmt">{o.sql}</pre>;
  if (o.error) {
    return (
      <div class="outcome">
        {head}
        <p class="error" role="alert">
          {o.error.message}
          {o.error.code ? ` (${o.error.code})` : ""}
        </p>
      </div>
    );
  }
  if (!o.result) {
    return (
      <div class="outcome">
        {head}
        <p class="hint">Not run: an earlier statement failed.</p>
      </div>
    );
  }
  const r = o.result;
  const stats = `${count(r.rows.length)} row${r.rows.length === 1 ? "" : "s"} · ${count(r.affected_row_count)} changed · ${count(r.rows_read ?? 0)} read · ${r.query_duration_ms?.toFixed(1) ?? "?"} ms`;
  return (
    <div class="outcome">
      {head}
      <p class="hint">{stats}</p>
      {r.cols.length > 0 && (
        <ScrollRegion label="Result rows">
          <table class="results">
            <thead>
              <tr>
                {r.cols.map((c, i) => (
                  <th key={i} scope="col">
                    {c.name ?? `column ${i + 1}`}
                    <span class="type">{c.decltype || "no declared type"}</span>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {r.rows.map((row, i) => (
                <tr key={i}>
                  {row.map((v, j) => {
                    // A value's stored type is named only where the column's type wouldn't lead one
                    // to expect it (SQLite keeps what it is given); every value has it on hover.
                    const expected = expectedType(r.cols[j]?.decltype);
                    const odd = v.type !== "null" && expected !== undefined && v.type !== expected;
                    return (
                      <td key={j} class={`v-${v.type}`} title={v.type}>
                        {cell(v)}
                        {odd && <span class="vt">{v.type}</span>}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </div>
  );
}
