import { useEffect, useState } from "preact/hooks";
import { api } from "../api.js";
import { useOrg } from "../context.js";
import { useAction, useLoad } from "../hooks.js";
import type { DatabaseConfiguration } from "../types.js";
import { Busy, Button, ErrorNote, Field, Notice, Section } from "../ui/kit.js";

export function DatabaseSettings({ base }: { base: string }) {
  const { canWrite } = useOrg();
  const config = useLoad(() => api.get<DatabaseConfiguration>(`${base}/configuration`), [base]);
  const [form, setForm] = useState<DatabaseConfiguration | undefined>();
  const [ips, setIps] = useState("");
  const [saved, setSaved] = useState<string>();
  const save = useAction();
  useEffect(() => {
    if (!config.data) return;
    setForm(config.data);
    setIps(config.data.allowed_ips.join("\n"));
  }, [config.data]);
  if (!form) {
    return (
      <Section title="Settings">
        {config.error ? <ErrorNote message={config.error} /> : <Busy label="Loading settings…" />}
      </Section>
    );
  }
  const flag = (key: "block_reads" | "block_writes" | "delete_protection", label: string) => (
    <Check
      label={label}
      checked={form[key]}
      disabled={!canWrite}
      onChange={(v) => setForm({ ...form, [key]: v })}
    />
  );
  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(undefined);
    const done = await save.run(() =>
      api.patch<DatabaseConfiguration>(`${base}/configuration`, changesOf(form, ips)),
    );
    if (done) {
      setSaved("Settings saved. The data plane applies them from the next statement.");
      // The answer is the configuration now in force. Taking it here, rather than loading it again,
      // can't overwrite what the person starts typing after the save with a late answer.
      setForm(done);
      setIps(done.allowed_ips.join("\n"));
    }
  };
  return (
    <Section title="Settings">
      <form class="stack-form" onSubmit={submit}>
        <Field label="Size limit" hint="Bytes or a unit such as 256mb; 0 means no limit.">
          <input
            value={form.size_limit}
            readOnly={!canWrite}
            onInput={(e) => setForm({ ...form, size_limit: e.currentTarget.value })}
          />
        </Field>
        {flag("block_reads", "Block reads (every statement fails with BLOCKED)")}
        {flag("block_writes", "Block writes (reads still work)")}
        {flag("delete_protection", "Delete protection (the database can't be deleted)")}
        <Field
          label="Allowed IP addresses"
          hint="One address or CIDR block per line, e.g. 203.0.113.0/24. Empty serves every address."
        >
          <textarea
            rows={3}
            value={ips}
            readOnly={!canWrite}
            onInput={(e) => setIps(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote message={save.error} />
        <Notice message={saved} />
        {canWrite && (
          <Button type="submit" kind="primary" busy={save.busy}>
            Save settings
          </Button>
        )}
      </form>
    </Section>
  );
}

/** The allowlist as typed: addresses and CIDR blocks separated by lines, spaces or commas. */
function addresses(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function Check(props: {
  label: string;
  checked: boolean;
  disabled: boolean;
  onChange: (v: boolean) => void;
}) {
  return (
    <label class="check">
      <input
        type="checkbox"
        checked={props.checked}
        disabled={props.disabled}
        onChange={(e) => props.onChange(e.currentTarget.checked)}
      />
      {props.label}
    </label>
  );
}

/** What the settings form sends: the fields a person can change here. */
function changesOf(form: DatabaseConfiguration, ips: string) {
  return {
    size_limit: form.size_limit.trim() || "0",
    block_reads: form.block_reads,
    block_writes: form.block_writes,
    delete_protection: form.delete_protection,
    allowed_ips: addresses(ips),
  };
}
