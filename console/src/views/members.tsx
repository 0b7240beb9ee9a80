import { useState } from "preact/hooks";
import { api, orgPath, seg } from "../api.js";
import { useMe, useOrg } from "../context.js";
import { useAction, useLoad } from "../hooks.js";
import type { Member, Page, Role } from "../types.js";
import {
  Busy,
  Button,
  ConfirmButton,
  ErrorNote,
  Field,
  Notice,
  Section,
  ShownOnce,
  Table,
} from "../ui/kit.js";

interface Invite {
  id: number;
  email: string;
  username?: string;
  role: Role;
  created_at: string;
}

const ROLES: Role[] = ["owner", "admin", "member", "viewer"];

export function Members() {
  const { org, canManage } = useOrg();
  const base = orgPath(org.slug);
  const members = useLoad(() => api.get<{ members: Member[] } & Page>(`${base}/members`), [base]);
  return (
    <>
      <h1>Members</h1>
      {org.type === "personal" && (
        <p class="lead">
          A personal organization has exactly one member. Create a team organization to work with others.
        </p>
      )}
      <Section title="Members and roles">
        {members.loading && !members.data && <Busy label="Loading members…" />}
        <ErrorNote message={members.error} />
        {members.data && (
          <Table label="Members" head={canManage ? ["Member", "Role", ""] : ["Member", "Role"]}>
            {members.data.members.map((m) => (
              <MemberRow key={m.username} m={m} base={base} onChange={members.reload} />
            ))}
          </Table>
        )}
        <p class="hint">
          Owners and admins manage members. Members create and change databases and groups; viewers only look.
        </p>
      </Section>
      {canManage && org.type === "team" && <AddMember base={base} onAdded={members.reload} />}
      {canManage && org.type === "team" && <Invites base={base} />}
    </>
  );
}

function MemberRow({ m, base, onChange }: { m: Member; base: string; onChange: () => void }) {
  const { canManage, role: myRole } = useOrg();
  const me = useMe();
  const action = useAction();
  const path = `${base}/members/${seg(m.username)}`;
  const roles = myRole === "owner" ? ROLES : ROLES.filter((r) => r !== "owner");
  return (
    <tr>
      <td>
        {m.username}
        <span class="hint block">{m.email}</span>
      </td>
      <td>
        {canManage && (myRole === "owner" || m.role !== "owner") ? (
          <select
            aria-label={`Role of ${m.username}`}
            value={m.role}
            disabled={action.busy}
            onChange={async (e) => {
              const role = e.currentTarget.value;
              if (await action.run(() => api.patch(path, { role }))) onChange();
            }}
          >
            {roles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        ) : (
          m.role
        )}
        <ErrorNote message={action.error} />
      </td>
      {canManage && (
        <td>
          {m.username !== me.user.username && (myRole === "owner" || m.role !== "owner") && (
            <ConfirmButton
              label="Remove"
              title={`Remove ${m.username}?`}
              body={
                <p>
                  {m.username} loses access, and their API tokens limited to this organization are revoked.
                </p>
              }
              busy={action.busy}
              onConfirm={async () => {
                if (await action.run(() => api.delete(path))) onChange();
              }}
            />
          )}
        </td>
      )}
    </tr>
  );
}

function AddMember({ base, onAdded }: { base: string; onAdded: () => void }) {
  const [username, setUsername] = useState("");
  const [role, setRole] = useState<Role>("member");
  const action = useAction();
  const [done, setDone] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setDone(undefined);
    if (await action.run(() => api.post(`${base}/members`, { username, role }))) {
      setDone(`${username} is now a ${role}.`);
      setUsername("");
      onAdded();
    }
  };
  return (
    <Section title="Add a member">
      <form class="inline-form" onSubmit={submit}>
        <Field label="Username" hint="An existing Shoal user.">
          <input
            value={username}
            required
            autocomplete="off"
            onInput={(e) => setUsername(e.currentTarget.value)}
          />
        </Field>
        <RoleSelect value={role} onChange={setRole} />
        <Button type="submit" kind="primary" busy={action.busy}>
          Add member
        </Button>
      </form>
      <ErrorNote message={action.error} />
      <Notice message={done} />
    </Section>
  );
}

function RoleSelect({ value, onChange }: { value: Role; onChange: (r: Role) => void }) {
  return (
    <Field label="Role">
      <select value={value} onChange={(e) => onChange(e.currentTarget.value as Role)}>
        <option value="admin">admin</option>
        <option value="member">member</option>
        <option value="viewer">viewer</option>
      </select>
    </Field>
  );
}

function Invites({ base }: { base: string }) {
  const v2 = base.replace("/v1/", "/v2/");
  const invites = useLoad(() => api.get<{ invites: Invite[] }>(`${v2}/invites`), [v2]);
  const [who, setWho] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [created, setCreated] = useState<{ id: number; token: string }>();
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const target = who.includes("@") ? { email: who } : { username: who };
    const r = await action.run(() =>
      api.post<{ invited: { id: number; token: string } }>(`${v2}/invites`, { ...target, role }),
    );
    if (r) {
      setCreated(r.invited);
      setWho("");
      invites.reload();
    }
  };
  return (
    <Section title="Invites">
      <p>
        Shoal sends no e-mail: the invited person sees the invite when signed in and accepts it. The invite
        token is only needed for an e-mail address their account doesn't have.
      </p>
      {created && (
        <ShownOnce
          label={`Invite ${created.id} token`}
          value={created.token}
          onDone={() => setCreated(undefined)}
        />
      )}
      <form class="inline-form" onSubmit={submit}>
        <Field label="Username or e-mail">
          <input value={who} required autocomplete="off" onInput={(e) => setWho(e.currentTarget.value)} />
        </Field>
        <RoleSelect value={role} onChange={setRole} />
        <Button type="submit" busy={action.busy}>
          Invite
        </Button>
      </form>
      <ErrorNote message={action.error ?? invites.error} />
      {invites.data && invites.data.invites.length > 0 && (
        <Table label="Pending invites" head={["Invited", "Role", "Sent", ""]}>
          {invites.data.invites.map((i) => (
            <tr key={i.id}>
              <td>{i.username ?? i.email}</td>
              <td>{i.role}</td>
              <td class="nowrap">
                {new Date(i.created_at).toLocaleDateString("en", { dateStyle: "medium" })}
              </td>
              <td>
                <Button
                  onClick={async () => {
                    if (await action.run(() => api.delete(`${v2}/invites/${seg(i.username ?? i.email)}`)))
                      invites.reload();
                  }}
                >
                  Withdraw
                </Button>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}
