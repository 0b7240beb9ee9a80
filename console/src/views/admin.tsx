import { useState } from "preact/hooks";
import { api, seg } from "../api.js";
import { useMe } from "../context.js";
import { when } from "../format.js";
import { type Action, type Loaded, useAction, useLoad } from "../hooks.js";
import type { Page } from "../types.js";
import { Busy, Button, ConfirmButton, ErrorNote, Field, Section, ShownOnce, Table } from "../ui/kit.js";

interface AdminUser {
  username: string;
  email: string;
  admin: boolean;
  created_at: string;
}
interface Node {
  id: string;
  url: string;
  version: string;
  started_at: string;
  heartbeat_at: string;
  live: boolean;
  locations: string[];
}

/** What the instance administrator sees: every user, and the Shoal processes (nodes). */
export function Admin() {
  const me = useMe();
  const users = useLoad(() => api.get<{ users: AdminUser[] } & Page>("/v1/admin/users"), []);
  const nodes = useLoad(() => api.get<{ nodes: Node[] }>("/v1/admin/nodes"), []);
  const [made, setMade] = useState<{ username: string; token: string }>();
  const action = useAction();
  if (!me.user.admin) return <p class="notice">Only the instance administrator sees this page.</p>;
  return (
    <>
      <h1>Instance</h1>
      <Section title="Users of this instance">
        {made && (
          <ShownOnce
            label={`First API token of ${made.username}`}
            value={made.token}
            onDone={() => setMade(undefined)}
          />
        )}
        <NewUser
          action={action}
          onMade={(m) => {
            setMade(m);
            users.reload();
          }}
        />
        <ErrorNote message={action.error ?? users.error} />
        {users.loading && !users.data && <Busy label="Loading users…" />}
        {users.data && (
          <Table label="Users" head={["Username", "E-mail", "Administrator", "Since", ""]}>
            {users.data.users.map((u) => (
              <tr key={u.username}>
                <td>{u.username}</td>
                <td>{u.email}</td>
                <td>{u.admin ? "yes" : "no"}</td>
                <td>{when(u.created_at)}</td>
                <td>
                  {u.username !== me.user.username && (
                    <ConfirmButton
                      label="Delete"
                      title={`Delete user ${u.username}?`}
                      body={
                        <p>
                          Their personal organization and its databases go with them, and their tokens stop
                          working.
                        </p>
                      }
                      typeToConfirm={u.username}
                      busy={action.busy}
                      onConfirm={async () => {
                        if (await action.run(() => api.delete(`/v1/admin/users/${seg(u.username)}`)))
                          users.reload();
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
      <Nodes nodes={nodes} />
    </>
  );
}

/** Creates a user, whose first API token the page then shows once. */
function NewUser(props: { action: Action; onMade: (m: { username: string; token: string }) => void }) {
  const { action } = props;
  const [username, setUsername] = useState("");
  const [email, setEmail] = useState("");
  const create = async (e: Event) => {
    e.preventDefault();
    const r = await action.run(() =>
      api.post<{ user: AdminUser; token: string }>("/v1/admin/users", { username, email }),
    );
    if (r) {
      setUsername("");
      setEmail("");
      props.onMade({ username: r.user.username, token: r.token });
    }
  };
  return (
    <form class="inline-form" onSubmit={create}>
      <Field label="Username">
        <input
          value={username}
          required
          autocomplete="off"
          onInput={(e) => setUsername(e.currentTarget.value)}
        />
      </Field>
      <Field label="E-mail">
        <input type="email" value={email} required onInput={(e) => setEmail(e.currentTarget.value)} />
      </Field>
      <Button type="submit" kind="primary" busy={action.busy}>
        Create user
      </Button>
    </form>
  );
}

function Nodes({ nodes }: { nodes: Loaded<{ nodes: Node[] }> }) {
  return (
    <Section title="Nodes (Shoal processes)">
      <ErrorNote message={nodes.error} />
      {nodes.data && (
        <Table label="Nodes" head={["Node", "Address", "Version", "State", "Last heartbeat", "Locations"]}>
          {nodes.data.nodes.map((n) => (
            <tr key={n.id}>
              <td class="mono">{n.id}</td>
              <td class="mono">{n.url}</td>
              <td>{n.version}</td>
              <td>{n.live ? "live" : "stopped"}</td>
              <td>{when(n.heartbeat_at)}</td>
              <td>{n.locations.join(", ")}</td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}
