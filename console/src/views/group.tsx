import { useEffect, useState } from "preact/hooks";
import { api, describe, orgPath, seg } from "../api.js";
import { useOrg } from "../context.js";
import { type Loaded, useAction, useLoad } from "../hooks.js";
import { locations } from "../locations.js";
import { href, navigate } from "../router.js";
import type { Database, Group, Page } from "../types.js";
import { Busy, Button, ConfirmButton, ErrorNote, Notice, Section } from "../ui/kit.js";

type Sync = "checking" | "in sync" | "catching up" | string;

/**
 * Whether each replica location has everything its primaries committed: Shoal's wait route
 * answers at once when it has, and 503 after the timeout (one second here) when it hasn't.
 */
function useSyncStates(base: string, group: Group | undefined): Record<string, Sync> {
  const [states, setStates] = useState<Record<string, Sync>>({});
  useEffect(() => {
    if (!group) return;
    let live = true;
    const replicas = group.locations.filter((l) => l !== group.primary);
    setStates(Object.fromEntries(replicas.map((l) => [l, "checking"])));
    for (const l of replicas) {
      api.get(`${base}/locations/${seg(l)}/wait?timeout=1`).then(
        () => live && setStates((s) => ({ ...s, [l]: "in sync" })),
        (e) =>
          live &&
          setStates((s) => ({
            ...s,
            [l]: (e as { status?: number }).status === 503 ? "catching up" : describe(e),
          })),
      );
    }
    return () => {
      live = false;
    };
  }, [base, group]);
  return states;
}

export function GroupPage({ name }: { name: string }) {
  const { org, canWrite } = useOrg();
  const base = `${orgPath(org.slug)}/groups/${seg(name)}`;
  const group = useLoad(() => api.get<{ group: Group }>(base).then((r) => r.group), [base]);
  const catalogue = useLoad(locations, []);
  const dbs = useLoad(
    () =>
      api.get<{ databases: Database[] } & Page>(`${orgPath(org.slug)}/databases?group=${seg(name)}&limit=20`),
    [base],
  );
  const sync = useSyncStates(base, group.data);
  const action = useAction();
  const [done, setDone] = useState<string>();
  const [pending, setPending] = useState<string>();

  const change = async (code: string, add: boolean) => {
    setDone(undefined);
    setPending(code);
    const ok = await action.run(() =>
      add ? api.post(`${base}/locations/${seg(code)}`) : api.delete(`${base}/locations/${seg(code)}`),
    );
    setPending(undefined);
    if (ok) {
      setDone(
        add ? `Added ${code}: every database of the group now has a replica there.` : `Removed ${code}.`,
      );
      group.reload();
    }
  };
  const remove = async () => {
    const ok = await action.run(() => api.delete(base));
    if (ok) navigate(href("orgs", org.slug, "groups"));
  };

  if (!group.data) {
    return group.error ? <ErrorNote message={group.error} /> : <Busy label="Loading the group…" />;
  }
  const g = group.data;
  const status = Object.fromEntries(g.status.locations.map((l) => [l.name, l.status]));
  return (
    <>
      <p class="crumbs">
        <a href={href("orgs", org.slug, "groups")}>Groups</a> /
      </p>
      <h1>{g.name}</h1>
      <Section title="Where it lives">
        <p>
          Primary in <strong>{g.primary}</strong>
          {g.locations.length > 1
            ? `, replicas in ${g.locations.filter((l) => l !== g.primary).join(", ")}`
            : ", no replicas"}
          .
        </p>
        <ErrorNote message={catalogue.error} />
        <ul class="locations" aria-label="Locations">
          {Object.entries(catalogue.data ?? {}).map(([code, desc]) => (
            <LocationItem
              key={code}
              code={code}
              desc={desc}
              role={code === g.primary ? "primary" : g.locations.includes(code) ? "replica" : ""}
              state={status[code]}
              sync={sync[code]}
              canWrite={canWrite}
              pending={pending === code}
              busy={action.busy}
              onChange={(add) => change(code, add)}
            />
          ))}
        </ul>
        <ErrorNote message={action.error} />
        <Notice message={done} />
      </Section>
      <GroupDatabases org={org.slug} dbs={dbs} />
      {canWrite && <DeleteGroup name={g.name} busy={action.busy} onConfirm={remove} />}
    </>
  );
}

/** One location of the catalogue: whether the group uses it, how it is doing, and a button to change it. */
function LocationItem(props: {
  code: string;
  desc: string;
  role: "primary" | "replica" | "";
  state: string | undefined;
  sync: string | undefined;
  canWrite: boolean;
  pending: boolean;
  busy: boolean;
  onChange: (add: boolean) => void;
}) {
  const { code, desc, role, state, sync, canWrite, pending, busy, onChange } = props;
  return (
    <li class={`location ${role || "unused"}`}>
      <div>
        <strong>{code}</strong>
        <span class="hint">{desc}</span>
      </div>
      <div class="loc-state">
        {role ? (
          <>
            <span class="badge">{role}</span>{" "}
            <span class={`state ${state ?? "up"}`}>{state === "down" ? "down" : "up"}</span>
            {role === "replica" && <span class="hint"> · {sync ?? "checking"}</span>}
          </>
        ) : (
          <span class="hint">not used</span>
        )}
      </div>
      {canWrite && role !== "primary" && (
        <Button
          busy={pending}
          disabled={busy}
          onClick={() => onChange(!role)}
          aria-label={role ? `Remove location ${code}` : `Add location ${code}`}
        >
          {role ? "Remove" : "Add"}
        </Button>
      )}
    </li>
  );
}

function GroupDatabases({ org, dbs }: { org: string; dbs: Loaded<{ databases: Database[] } & Page> }) {
  return (
    <Section title="Databases in this group">
      <ErrorNote message={dbs.error} />
      {dbs.data && dbs.data.databases.length === 0 && <p>None yet.</p>}
      <ul>
        {dbs.data?.databases.map((d) => (
          <li key={d.DbId}>
            <a href={href("orgs", org, "databases", d.Name)}>{d.Name}</a>
          </li>
        ))}
      </ul>
      {dbs.data?.pagination.next && <p class="hint">More in the database list.</p>}
    </Section>
  );
}

function DeleteGroup(props: { name: string; busy: boolean; onConfirm: () => void }) {
  return (
    <Section title="Delete this group">
      <p>Deleting the group deletes every database in it, with their data, in every location.</p>
      <ConfirmButton
        label="Delete group"
        title={`Delete group ${props.name}?`}
        body={<p>Every database in {props.name} and all of its data will be gone. This can't be undone.</p>}
        typeToConfirm={props.name}
        busy={props.busy}
        onConfirm={props.onConfirm}
      />
    </Section>
  );
}
