import { useState } from "preact/hooks";
import { api, orgPath, seg } from "../api.js";
import { useOrg } from "../context.js";
import { useAction, useLoad } from "../hooks.js";
import { Busy, Button, ConfirmButton, ErrorNote, Field, Section, ShownOnce, Table } from "../ui/kit.js";
import { IdentityProviders } from "./identity-providers.js";

interface MyToken {
  name: string;
  id: string;
  organization?: string;
  group?: string;
  created_at: string;
}
interface OrgToken extends MyToken {
  owner?: { username: string; email: string };
}

export function Tokens() {
  const { org, canManage } = useOrg();
  const mine = useLoad(() => api.get<{ tokens: MyToken[] }>("/v1/auth/api-tokens"), []);
  const orgTokens = useLoad(
    () => api.get<{ tokens: OrgToken[] }>(`${orgPath(org.slug)}/api-tokens`),
    [org.slug],
  );
  const revoke = useAction();
  const reload = () => {
    mine.reload();
    orgTokens.reload();
  };
  const revokeAt = async (path: string) => {
    if (await revoke.run(() => api.delete(path))) reload();
  };
  return (
    <>
      <h1>API tokens</h1>
      <NewToken org={org.slug} onMinted={reload} />
      <Section title="Your API tokens">
        {mine.loading && !mine.data && <Busy label="Loading tokens…" />}
        <ErrorNote message={mine.error ?? revoke.error} />
        {mine.data && (
          <Table label="Your API tokens" head={["Name", "Limited to", "Created", ""]}>
            {mine.data.tokens.map((t) => (
              <tr key={t.id}>
                <td>{t.name}</td>
                <td>
                  {t.group ? `${t.organization} / ${t.group}` : (t.organization ?? "all your organizations")}
                </td>
                <td>{t.created_at}</td>
                <td>
                  <ConfirmButton
                    label="Revoke"
                    title={`Revoke ${t.name}?`}
                    body={
                      <p>
                        Anything using {t.name} stops working at once. If it is the token you signed in with,
                        you are signed out.
                      </p>
                    }
                    busy={revoke.busy}
                    onConfirm={() => revokeAt(`/v1/auth/api-tokens/${seg(t.name)}`)}
                  />
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
      <Section title={canManage ? `Tokens limited to ${org.slug}` : `Your tokens limited to ${org.slug}`}>
        <ErrorNote message={orgTokens.error} />
        {orgTokens.data && orgTokens.data.tokens.length === 0 && <p class="hint">None.</p>}
        {orgTokens.data && orgTokens.data.tokens.length > 0 && (
          <Table label="Organization tokens" head={["Name", "Owner", "Group", "Created", ""]}>
            {orgTokens.data.tokens.map((t) => (
              <tr key={t.id}>
                <td>{t.name}</td>
                <td>{t.owner?.username ?? "you"}</td>
                <td>{t.group ?? "–"}</td>
                <td>{t.created_at}</td>
                <td>
                  <ConfirmButton
                    label="Revoke"
                    title={`Revoke ${t.name}?`}
                    body={<p>Anything using this token stops working at once.</p>}
                    busy={revoke.busy}
                    onConfirm={() => revokeAt(`${orgPath(org.slug)}/api-tokens/${seg(t.id)}`)}
                  />
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
      <IdentityProviders />
    </>
  );
}

/** Mints an API token and shows its value once. */
function NewToken({ org, onMinted }: { org: string; onMinted: () => void }) {
  const [name, setName] = useState("");
  const [limit, setLimit] = useState(true);
  const [minted, setMinted] = useState<{ name: string; value: string }>();
  const mint = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const r = await mint.run(() =>
      api.post<{ token: { name: string; value: string } }>(
        `/v2/auth/api-tokens/${seg(name)}`,
        limit ? { organization: org } : {},
      ),
    );
    if (r) {
      setMinted(r.token);
      setName("");
      onMinted();
    }
  };
  return (
    <Section title="New API token">
      {minted ? (
        <ShownOnce
          label={`API token ${minted.name}`}
          value={minted.value}
          onDone={() => setMinted(undefined)}
        />
      ) : (
        <form class="stack-form" onSubmit={submit}>
          <Field label="Token name" hint="Unique among your tokens, e.g. ci-deploy.">
            <input value={name} required autocomplete="off" onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <label class="check">
            <input type="checkbox" checked={limit} onChange={(e) => setLimit(e.currentTarget.checked)} />
            Limit it to the organization {org} (otherwise it acts on all of your organizations)
          </label>
          <Button type="submit" kind="primary" busy={mint.busy}>
            Create token
          </Button>
        </form>
      )}
      <ErrorNote message={mint.error} />
    </Section>
  );
}
