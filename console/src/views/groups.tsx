import { useState } from "preact/hooks";
import { api, orgPath } from "../api.js";
import { useOrg } from "../context.js";
import { useAction, useLoad } from "../hooks.js";
import { locations } from "../locations.js";
import { href, navigate } from "../router.js";
import type { Group, Page } from "../types.js";
import { Busy, Button, ErrorNote, Field, Section, Table } from "../ui/kit.js";

export function Groups() {
  const { org, canWrite } = useOrg();
  const list = useLoad(() => api.get<{ groups: Group[] } & Page>(`${orgPath(org.slug)}/groups`), [org.slug]);
  return (
    <>
      <h1>Groups</h1>
      <p class="lead">
        A group is where its databases live: every database of the group has its primary in the group's
        primary location and a replica in each of its other locations.
      </p>
      {canWrite && <NewGroup />}
      <Section title="All groups">
        {list.loading && !list.data && <Busy label="Loading groups…" />}
        <ErrorNote message={list.error} />
        {list.data && list.data.groups.length === 0 && <p>No groups yet.</p>}
        {list.data && list.data.groups.length > 0 && (
          <Table label="Groups" head={["Name", "Primary", "Locations"]}>
            {list.data.groups.map((g) => (
              <tr key={g.uuid}>
                <td>
                  <a href={href("orgs", org.slug, "groups", g.name)}>{g.name}</a>
                </td>
                <td>{g.primary}</td>
                <td>{g.locations.join(", ")}</td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}

function NewGroup() {
  const { org } = useOrg();
  const codes = useLoad(locations, []);
  const [name, setName] = useState("");
  const [location, setLocation] = useState("");
  const action = useAction();
  const chosen = location || Object.keys(codes.data ?? {})[0] || "";
  const submit = async (e: Event) => {
    e.preventDefault();
    const made = await action.run(() =>
      api.post<{ group: Group }>(`${orgPath(org.slug)}/groups`, { name, location: chosen }),
    );
    if (made) navigate(href("orgs", org.slug, "groups", made.group.name));
  };
  return (
    <Section title="New group">
      <form class="inline-form" onSubmit={submit}>
        <Field label="Group name" hint="Lowercase letters, digits and dashes.">
          <input value={name} required onInput={(e) => setName(e.currentTarget.value)} autocomplete="off" />
        </Field>
        <Field label="Primary location">
          <select value={chosen} onChange={(e) => setLocation(e.currentTarget.value)}>
            {Object.entries(codes.data ?? {}).map(([code, desc]) => (
              <option key={code} value={code}>
                {code} · {desc}
              </option>
            ))}
          </select>
        </Field>
        <Button type="submit" kind="primary" busy={action.busy}>
          {action.busy ? "Creating the group…" : "Create group"}
        </Button>
      </form>
      <ErrorNote message={action.error ?? codes.error} />
    </Section>
  );
}
