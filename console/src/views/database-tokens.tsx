import { useState } from "preact/hooks";
import { api } from "../api.js";
import { useOrg } from "../context.js";
import { useAction } from "../hooks.js";
import { forgetEditorToken } from "../hrana.js";
import { Button, ConfirmButton, ErrorNote, Field, Notice, Section, ShownOnce } from "../ui/kit.js";
import { newRule, type RuleDraft, rulesOf, TableRules } from "./table-rules.js";

const EXPIRATIONS = [
  ["1h", "1 hour"],
  ["1d", "1 day"],
  ["7d", "7 days"],
  ["30d", "30 days"],
  ["never", "Never"],
] as const;

/** Mints a database token (shown once) and rotates the database's credentials. */
export function DatabaseTokens({ base }: { base: string }) {
  const { canWrite } = useOrg();
  const [expiration, setExpiration] = useState("1d");
  const [access, setAccess] = useState("full-access");
  const [rules, setRules] = useState<RuleDraft[]>([newRule()]);
  const [token, setToken] = useState<string>();
  const [rotated, setRotated] = useState<string>();
  const mint = useAction();
  const rotate = useAction();
  if (!canWrite) {
    return (
      <Section title="Database tokens">
        <p class="hint">Viewers can't mint database tokens.</p>
      </Section>
    );
  }
  const submit = async (e: Event) => {
    e.preventDefault();
    const limited = access === "tables";
    const q = new URLSearchParams({ expiration, authorization: limited ? "full-access" : access });
    const body = limited ? { fine_grained_permissions: rulesOf(rules) } : undefined;
    const r = await mint.run(() => api.post<{ jwt: string }>(`${base}/auth/tokens?${q}`, body));
    if (r) setToken(r.jwt);
  };
  return (
    <Section title="Database tokens">
      <p>A database token lets a client run SQL on this database. Keep it like a password.</p>
      {token ? (
        <ShownOnce label="New database token" value={token} onDone={() => setToken(undefined)} />
      ) : (
        <form class="inline-form" onSubmit={submit}>
          <Field label="Expires after">
            <select value={expiration} onChange={(e) => setExpiration(e.currentTarget.value)}>
              {EXPIRATIONS.map(([v, l]) => (
                <option key={v} value={v}>
                  {l}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Access">
            <select value={access} onChange={(e) => setAccess(e.currentTarget.value)}>
              <option value="full-access">Read and write</option>
              <option value="read-only">Read only</option>
              <option value="tables">Limited to tables</option>
            </select>
          </Field>
          {access === "tables" && <TableRules rules={rules} onChange={setRules} />}
          <Button type="submit" kind="primary" busy={mint.busy}>
            Mint token
          </Button>
        </form>
      )}
      <ErrorNote message={mint.error} />
      <h3>Rotate</h3>
      <p>Rotating invalidates every token of this database at once, including the console's own.</p>
      <ConfirmButton
        label="Rotate credentials"
        title="Invalidate every token of this database?"
        body={<p>Every client using a token of this database stops working until it gets a new one.</p>}
        busy={rotate.busy}
        onConfirm={async () => {
          setRotated(undefined);
          if (await rotate.run(() => api.post(`${base}/auth/rotate`))) {
            forgetEditorToken(base);
            setRotated("Every earlier token is now invalid.");
          }
        }}
      />
      <ErrorNote message={rotate.error} />
      <Notice message={rotated} />
    </Section>
  );
}
