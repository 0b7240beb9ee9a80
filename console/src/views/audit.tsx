import { useState } from "preact/hooks";
import { api, orgPath } from "../api.js";
import { useOrg } from "../context.js";
import { when } from "../format.js";
import { useLoad } from "../hooks.js";
import { Busy, Button, ErrorNote, Field, Section, Table } from "../ui/kit.js";

interface Entry {
  code: string;
  message: string;
  origin: string;
  author: string;
  created_at: string;
}

const PAGE_SIZE = 50;

export function Audit() {
  const { org, canManage } = useOrg();
  const [filter, setFilter] = useState({ code: "", author: "" });
  const [cursors, setCursors] = useState<string[]>([""]);
  const cursor = cursors[cursors.length - 1] ?? "";
  const page = useLoad(async () => {
    if (!canManage) return undefined;
    const q = new URLSearchParams({ page_size: String(PAGE_SIZE) });
    if (cursor) q.set("cursor", cursor);
    if (filter.code) q.set("code", filter.code);
    if (filter.author) q.set("author", filter.author);
    return api.get<{ audit_logs: Entry[]; pagination: { next: string | null; total_rows: number } }>(
      `${orgPath(org.slug)}/audit-logs?${q}`,
    );
  }, [org.slug, cursor, filter, canManage]);
  if (!canManage) {
    return (
      <>
        <h1>Audit log</h1>
        <p class="notice">Only owners and admins can read the audit log.</p>
      </>
    );
  }
  return (
    <>
      <h1>Audit log</h1>
      <Section title="Every change in this organization, newest first">
        <AuditFilter
          onFilter={(f) => {
            setFilter(f);
            setCursors([""]);
          }}
        />
        {page.loading && <Busy label="Loading the audit log…" />}
        <ErrorNote message={page.error} />
        {page.data && (
          <p class="hint">
            {page.data.pagination.total_rows === 1
              ? "1 entry matches."
              : `${page.data.pagination.total_rows} entries match.`}
          </p>
        )}
        {page.data && page.data.audit_logs.length > 0 && (
          <Table label="Audit log" head={["When", "Code", "Author", "What"]}>
            {page.data.audit_logs.map((e, i) => (
              <tr key={`${e.created_at}-${i}`}>
                <td class="nowrap">{when(e.created_at)}</td>
                <td class="mono">{e.code}</td>
                <td>{e.author}</td>
                <td>{e.message}</td>
              </tr>
            ))}
          </Table>
        )}
        <div class="row pager">
          <Button disabled={cursors.length < 2} onClick={() => setCursors((c) => c.slice(0, -1))}>
            Newer
          </Button>
          <Button
            disabled={!page.data?.pagination.next}
            onClick={() => {
              const next = page.data?.pagination.next;
              if (next) setCursors((c) => [...c, next]);
            }}
          >
            Older
          </Button>
        </div>
      </Section>
    </>
  );
}

/** The code and author an audit log is narrowed to. */
function AuditFilter({ onFilter }: { onFilter: (f: { code: string; author: string }) => void }) {
  const [code, setCode] = useState("");
  const [author, setAuthor] = useState("");
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        onFilter({ code: code.trim(), author: author.trim() });
      }}
    >
      <Field label="Code" hint="e.g. db-create, org-set-overages">
        <input value={code} onInput={(e) => setCode(e.currentTarget.value)} autocomplete="off" />
      </Field>
      <Field label="Author" hint="A username">
        <input value={author} onInput={(e) => setAuthor(e.currentTarget.value)} autocomplete="off" />
      </Field>
      <Button type="submit">Filter</Button>
    </form>
  );
}
