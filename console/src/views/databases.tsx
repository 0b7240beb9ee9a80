import { useEffect, useState } from "preact/hooks";
import { api, orgPath, seg } from "../api.js";
import { useOrg } from "../context.js";
import { useLoad } from "../hooks.js";
import { href } from "../router.js";
import type { Database, Page } from "../types.js";
import { Busy, Button, ErrorNote, Field, Section, Table } from "../ui/kit.js";
import { NewDatabase } from "./new-database.js";
import { RecentlyDeleted } from "./recently-deleted.js";

const PAGE_SIZE = 50;

/**
 * One page of the organization's databases at a time (the API pages by name with a cursor, so a
 * list of thousands costs the same as a list of ten); the search runs on the server.
 */
export function Databases() {
  const { org, canWrite } = useOrg();
  const [typed, setTyped] = useState("");
  const [search, setSearch] = useState("");
  // Cursors of the pages before the one shown; the last entry is the current page's cursor.
  const [cursors, setCursors] = useState<string[]>([""]);
  useEffect(() => {
    const text = typed.trim();
    if (text === search) return;
    const t = setTimeout(() => {
      setSearch(text);
      setCursors([""]);
    }, 250);
    return () => clearTimeout(t);
  }, [typed, search]);
  const cursor = cursors[cursors.length - 1] ?? "";
  const page = useLoad(() => {
    const q = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (cursor) q.set("cursor", cursor);
    if (search) q.set("search", search);
    return api.get<{ databases: Database[] } & Page>(`${orgPath(org.slug)}/databases?${q}`);
  }, [org.slug, cursor, search]);
  return (
    <>
      <h1>Databases</h1>
      {canWrite && <NewDatabase />}
      <Section title="All databases">
        <form class="inline-form" onSubmit={(e) => e.preventDefault()}>
          <Field label="Search by name">
            <input type="search" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
          </Field>
        </form>
        {page.loading && <Busy label="Loading databases…" />}
        <ErrorNote message={page.error} />
        {page.data && page.data.databases.length === 0 && (
          <p>{search ? `No database name contains “${search}”.` : "No databases yet."}</p>
        )}
        {page.data && page.data.databases.length > 0 && (
          <DatabaseTable org={org.slug} databases={page.data.databases} />
        )}
        <div class="row pager">
          <Button disabled={cursors.length < 2} onClick={() => setCursors((c) => c.slice(0, -1))}>
            Previous page
          </Button>
          <span class="hint">Page {cursors.length}</span>
          <Button
            disabled={!page.data?.pagination.next}
            onClick={() => {
              const next = page.data?.pagination.next;
              if (next) setCursors((c) => [...c, next]);
            }}
          >
            Next page
          </Button>
        </div>
      </Section>
      <RecentlyDeleted />
    </>
  );
}

/** A page of databases; the Notes column only when some database on it has something to note. */
function DatabaseTable({ org, databases }: { org: string; databases: Database[] }) {
  const withNotes = databases.some((d) => notes(d) !== "");
  return (
    <Table label="Databases" head={["Name", "Group", "Locations", ...(withNotes ? ["Notes"] : [])]}>
      {databases.map((d) => (
        <tr key={d.DbId}>
          <td>
            <a href={href("orgs", org, "databases", d.Name)}>{d.Name}</a>
          </td>
          <td>
            <a href={href("orgs", org, "groups", d.group)}>{d.group}</a>
          </td>
          <td>{d.regions.join(", ")}</td>
          {withNotes && <td>{notes(d)}</td>}
        </tr>
      ))}
    </Table>
  );
}

function notes(d: Database): string {
  const n: string[] = [];
  if (d.parent) n.push(`branch of ${d.parent.name ?? "a deleted database"}`);
  if (d.is_schema) n.push("schema database");
  if (d.encryption_cipher) n.push(`encrypted (${d.encryption_cipher}; requests need its key)`);
  if (d.schema) n.push(`follows ${d.schema}`);
  if (d.block_reads) n.push("reads blocked");
  if (d.block_writes) n.push("writes blocked");
  return n.join(", ");
}

export const databasePath = (org: string, db: string) => `${orgPath(org)}/databases/${seg(db)}`;
