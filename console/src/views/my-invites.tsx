import { api, seg } from "../api.js";
import { useMe } from "../context.js";
import { useAction, useLoad } from "../hooks.js";
import type { Role } from "../types.js";
import { Button, ErrorNote, Section } from "../ui/kit.js";

interface MyInvite {
  id: number;
  organization: string;
  organization_name: string;
  role: Role;
  inviter: string;
}

/** Invites addressed to the signed-in person, to accept or decline; nothing shows when none. */
export function MyInvites() {
  const me = useMe();
  const invites = useLoad(() => api.get<{ invites: MyInvite[] }>("/v1/user/invites"), []);
  const action = useAction();
  const answer = async (id: number, verb: "accept" | "decline") => {
    if (await action.run(() => api.post(`/v1/user/invites/${seg(String(id))}/${verb}`))) {
      invites.reload();
      if (verb === "accept") me.reloadOrgs();
    }
  };
  if (!invites.data || invites.data.invites.length === 0) return null;
  return (
    <Section title="Invitations for you">
      <ul class="plain-list">
        {invites.data.invites.map((i) => (
          <li key={i.id} class="row">
            <span>
              <strong>{i.inviter}</strong> invites you to <strong>{i.organization_name}</strong> as {i.role}.
            </span>
            <Button kind="primary" busy={action.busy} onClick={() => answer(i.id, "accept")}>
              Accept
            </Button>
            <Button busy={action.busy} onClick={() => answer(i.id, "decline")}>
              Decline
            </Button>
          </li>
        ))}
      </ul>
      <ErrorNote message={action.error} />
    </Section>
  );
}
