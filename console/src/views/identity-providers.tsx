import { useState } from "preact/hooks";
import { api, seg } from "../api.js";
import { useOrg } from "../context.js";
import { useAction, useLoad } from "../hooks.js";
import { Busy, Button, ConfirmButton, ErrorNote, Field, Section, Table } from "../ui/kit.js";

interface KeySet {
  jwks_name: string;
  jwks_url: string;
  issuer: string | null;
  audience: string | null;
}

/**
 * The identity providers whose tokens open the organization's databases (JWKS sign-in): listed for
 * everyone, saved and removed by owners and admins.
 */
export function IdentityProviders() {
  const { org, canManage } = useOrg();
  const base = `/v2/organizations/${seg(org.slug)}/jwks`;
  const sets = useLoad(() => api.get<{ jwks: KeySet[] }>(base), [base]);
  const remove = useAction();
  return (
    <Section title="Identity providers">
      <p class="hint">
        Tokens your app's identity provider signs open the databases their claims name (id, gid), so signed-in
        users can query their own database directly. See the guide "Sign-in with your identity provider".
      </p>
      {sets.loading && !sets.data && <Busy label="Loading identity providers…" />}
      <ErrorNote message={sets.error ?? remove.error} />
      {sets.data && sets.data.jwks.length === 0 && <p class="hint">None trusted.</p>}
      {sets.data && sets.data.jwks.length > 0 && (
        <Table
          label="Identity providers"
          head={
            canManage
              ? ["Name", "Key set URL", "Issuer", "Audience", ""]
              : ["Name", "Key set URL", "Issuer", "Audience"]
          }
        >
          {sets.data.jwks.map((k) => (
            <tr key={k.jwks_name}>
              <td>{k.jwks_name}</td>
              <td>{k.jwks_url}</td>
              <td>{k.issuer ?? "–"}</td>
              <td>{k.audience ?? "–"}</td>
              {canManage && (
                <td>
                  <ConfirmButton
                    label="Remove"
                    title={`Stop trusting ${k.jwks_name}?`}
                    body={<p>Tokens its keys signed stop opening databases at once.</p>}
                    busy={remove.busy}
                    onConfirm={async () => {
                      if (await remove.run(() => api.delete(`${base}/${seg(k.jwks_name)}`))) sets.reload();
                    }}
                  />
                </td>
              )}
            </tr>
          ))}
        </Table>
      )}
      {canManage && <TrustProvider base={base} onSaved={sets.reload} />}
    </Section>
  );
}

function TrustProvider({ base, onSaved }: { base: string; onSaved: () => void }) {
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [issuer, setIssuer] = useState("");
  const [audience, setAudience] = useState("");
  const save = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { jwks_url: url, issuer: issuer || undefined, audience: audience || undefined };
    if (await save.run(() => api.put(`${base}/${seg(name)}`, body))) {
      setName("");
      setUrl("");
      setIssuer("");
      setAudience("");
      onSaved();
    }
  };
  return (
    <form class="stack-form" onSubmit={submit} aria-label="Trust a provider">
      <h3>Trust a provider</h3>
      <Field
        label="Provider name"
        hint="A name for it here, e.g. clerk. Saving under a name in use replaces it."
      >
        <input value={name} required autocomplete="off" onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field
        label="Key set URL"
        hint="Where it publishes its keys, e.g. https://<app>/.well-known/jwks.json. Fetched now."
      >
        <input
          value={url}
          required
          type="url"
          autocomplete="off"
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
      </Field>
      <Field label="Issuer (optional, recommended)" hint="Tokens must carry exactly this iss.">
        <input value={issuer} autocomplete="off" onInput={(e) => setIssuer(e.currentTarget.value)} />
      </Field>
      <Field
        label="Audience (optional)"
        hint="Tokens' aud must hold it. Needed for tokens that name no database or group, which then open every database."
      >
        <input value={audience} autocomplete="off" onInput={(e) => setAudience(e.currentTarget.value)} />
      </Field>
      <Button type="submit" kind="primary" busy={save.busy}>
        Trust provider
      </Button>
      <ErrorNote message={save.error} />
    </form>
  );
}
