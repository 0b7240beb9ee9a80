import { api } from "../api.js";
import { useOrg } from "../context.js";
import { useAction, useLoad } from "../hooks.js";
import { DATABASE_TABS, type DatabaseTab, href, navigate } from "../router.js";
import type { Database } from "../types.js";
import { Busy, ConfirmButton, CopyField, ErrorNote, ScrollRegion, Section } from "../ui/kit.js";
import { DatabaseSettings } from "./database-settings.js";
import { DatabaseTokens } from "./database-tokens.js";
import { databasePath } from "./databases.js";
import { UsageCharts } from "./usage-charts.js";

/** The URL any client on this machine can use: the database by path on this very origin. */
export const pathUrl = (org: string, db: string) =>
  `${location.origin}/db/${encodeURIComponent(org)}/${encodeURIComponent(db)}/`;

const TAB_LABELS: Record<DatabaseTab, string> = {
  overview: "Overview",
  settings: "Settings",
  tokens: "Tokens",
  delete: "Delete",
};

export function DatabasePage({ name, tab }: { name: string; tab: DatabaseTab }) {
  const { org, canWrite } = useOrg();
  const base = databasePath(org.slug, name);
  const db = useLoad(() => api.get<{ database: Database }>(base).then((r) => r.database), [base]);
  if (!db.data) {
    if (!db.error) return <Busy label="Loading the database…" />;
    return (
      <>
        <h1>{name}</h1>
        <ErrorNote message={db.error} />
        <p>
          <a href={href("orgs", org.slug, "databases")}>Back to the databases of {org.slug}</a>
        </p>
      </>
    );
  }
  const d = db.data;
  // Deleting is for those who may write; others get no tab for it (a link to it shows the overview).
  const tabs = DATABASE_TABS.filter((t) => t !== "delete" || canWrite);
  const shown = tabs.includes(tab) ? tab : "overview";
  return (
    <>
      <p class="crumbs">
        <a href={href("orgs", org.slug, "databases")}>Databases</a> /
      </p>
      <div class="title-row">
        <h1>{d.Name}</h1>
        {canWrite && (
          <a class="btn primary" href={href("orgs", org.slug, "databases", d.Name, "sql")}>
            Open SQL editor
          </a>
        )}
      </div>
      <p>
        In group <a href={href("orgs", org.slug, "groups", d.group)}>{d.group}</a>: primary in{" "}
        {d.primaryRegion}
        {d.regions.length > 1
          ? `, replicas in ${d.regions.filter((r) => r !== d.primaryRegion).join(", ")}`
          : ""}
        .{d.parent && ` Branched from ${d.parent.name ?? "a deleted database"} at ${d.parent.branched_at}.`}
      </p>
      <nav class="tabs" aria-label={`Tabs for ${d.Name}`}>
        {tabs.map((t) => (
          <a
            key={t}
            href={href("orgs", org.slug, "databases", d.Name, t)}
            aria-current={t === shown ? "page" : undefined}
          >
            {TAB_LABELS[t]}
          </a>
        ))}
      </nav>
      {shown === "overview" && (
        <>
          <ConnectSection org={org.slug} d={d} />
          <UsageCharts base={base} />
        </>
      )}
      {shown === "settings" && <DatabaseSettings base={base} />}
      {shown === "tokens" && <DatabaseTokens base={base} />}
      {shown === "delete" && <DeleteSection org={org.slug} d={d} base={base} />}
    </>
  );
}

function ConnectSection({ org, d }: { org: string; d: Database }) {
  const url = pathUrl(org, d.Name);
  const snippet = `import { createClient } from "@libsql/client";

const db = createClient({
  url: "${url}",
  authToken: process.env.DB_TOKEN, // a database token (the Tokens tab)
});
const { rows } = await db.execute("SELECT 1");`;
  return (
    <Section title="Connect">
      <CopyField label="URL (by path, works without DNS)" value={url} />
      <CopyField label="Hostname (as on Turso; must resolve to Shoal)" value={d.Hostname} />
      <p class="hint">With @libsql/client:</p>
      <ScrollRegion label="@libsql/client example" class="code-wrap">
        <pre class="code">{snippet}</pre>
      </ScrollRegion>
    </Section>
  );
}

function DeleteSection({ org, d, base }: { org: string; d: Database; base: string }) {
  const del = useAction();
  return (
    <Section title="Delete this database">
      <p>The database and its data go, in every location. Branches made from it stay.</p>
      <ConfirmButton
        label="Delete database"
        title={`Delete database ${d.Name}?`}
        body={<p>All of its data will be gone. This can't be undone.</p>}
        typeToConfirm={d.Name}
        busy={del.busy}
        onConfirm={async () => {
          if (await del.run(() => api.delete(base))) navigate(href("orgs", org, "databases"));
        }}
      />
      <ErrorNote message={del.error} />
    </Section>
  );
}
