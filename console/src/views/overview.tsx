import { useState } from "preact/hooks";
import { api, orgPath } from "../api.js";
import { useMe, useOrg } from "../context.js";
import { bytes, count } from "../format.js";
import { useAction, useLoad } from "../hooks.js";
import { href, navigate } from "../router.js";
import type { Organization } from "../types.js";
import { Busy, Button, ErrorNote, Field, Notice, Section } from "../ui/kit.js";
import { InstanceSummary } from "./instance-summary.js";
import { MyInvites } from "./my-invites.js";

interface Quotas {
  rowsRead: number | null;
  rowsWritten: number | null;
  databases: number | null;
  locations: number | null;
  storage: number | null;
  groups: number | null;
}
interface OrgUsage {
  rows_read: number;
  rows_written: number;
  storage_bytes: number;
  databases: number;
  locations: number;
  groups: number;
}

function Meter(props: { label: string; used: number; quota: number | null; fmt?: (n: number) => string }) {
  const fmt = props.fmt ?? count;
  const pct = props.quota ? Math.min(100, Math.round((props.used / props.quota) * 100)) : 0;
  return (
    <div class="meter">
      <div class="meter-text">
        <span>{props.label}</span>
        <span>
          {props.quota === null
            ? `${fmt(props.used)} · no limit`
            : `${fmt(props.used)} of ${fmt(props.quota)}`}
        </span>
      </div>
      {props.quota !== null && (
        <progress max={100} value={pct} aria-label={`${props.label}: ${pct}% of the quota used`}>
          {pct}%
        </progress>
      )}
    </div>
  );
}

export function Overview() {
  const { org, canWrite } = useOrg();
  const plan = useLoad(async () => {
    const base = orgPath(org.slug);
    const [{ plans }, { organization }] = await Promise.all([
      api.get<{ plans: Array<{ name: string; price: string; quotas: Quotas }> }>(`${base}/plans`),
      api.get<{ organization: { usage: OrgUsage } }>(`${base}/usage`),
    ]);
    return { plan: plans.find((p) => p.name === org.plan_id), usage: organization.usage };
  }, [org.slug]);
  const q = plan.data?.plan?.quotas;
  // A plan without a single quota (the self-hosted default): overages are moot.
  const unlimited = q !== undefined && Object.values(q).every((v) => v === null);
  const u = plan.data?.usage;
  return (
    <>
      <h1>{org.type === "personal" ? `${org.slug} (personal)` : org.name}</h1>
      {(org.blocked_reads || org.blocked_writes) && (
        <p class="error" role="alert">
          This organization is blocked: {org.blocked_reads ? "reads and writes" : "writes"} are refused
          because a monthly quota is used up. Turn overages on, or ask the administrator for a larger plan.
        </p>
      )}
      {u && u.databases === 0 && <FirstSteps org={org.slug} hasGroup={u.groups > 0} canWrite={canWrite} />}
      <Section title="Plan and usage this month">
        {plan.loading && !plan.data && <Busy label="Loading plan and usage…" />}
        <ErrorNote message={plan.error} />
        {u && (
          <>
            <p>
              Plan <strong>{org.plan_id}</strong>
              {plan.data?.plan && plan.data.plan.price !== "0" ? ` (${plan.data.plan.price} a month)` : ""}.
            </p>
            <div class="meters">
              <Meter label="Rows read" used={u.rows_read} quota={q?.rowsRead ?? null} />
              <Meter label="Rows written" used={u.rows_written} quota={q?.rowsWritten ?? null} />
              <Meter label="Storage" used={u.storage_bytes} quota={q?.storage ?? null} fmt={bytes} />
              <Meter label="Databases" used={u.databases} quota={q?.databases ?? null} />
              <Meter label="Groups" used={u.groups} quota={q?.groups ?? null} />
              <Meter label="Locations" used={u.locations} quota={q?.locations ?? null} />
            </div>
          </>
        )}
      </Section>
      <Overages unlimited={unlimited} />
      <InstanceSummary />
      <MyInvites />
      <NewOrganization />
    </>
  );
}

function NewOrganization() {
  const me = useMe();
  const [name, setName] = useState("");
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const made = await action.run(() =>
      api.post<{ organization: Organization }>("/v1/organizations", { name }),
    );
    if (made) {
      setName("");
      me.reloadOrgs();
      navigate(href("orgs", made.organization.slug));
    }
  };
  return (
    <Section title="New team organization">
      <form class="inline-form" onSubmit={submit}>
        <Field label="Name">
          <input value={name} required onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Button type="submit" busy={action.busy}>
          Create organization
        </Button>
      </form>
      <ErrorNote message={action.error} />
    </Section>
  );
}

/** What an organization without databases does first: a group, a database in it, a token to connect with. */
function FirstSteps({ org, hasGroup, canWrite }: { org: string; hasGroup: boolean; canWrite: boolean }) {
  return (
    <Section title="First steps">
      <ol>
        <li>
          {hasGroup ? "A group holds your databases in its locations: you have one." : "Create a group: "}
          {!hasGroup && <a href={href("orgs", org, "groups")}>Groups</a>}
          {!hasGroup && ", with the location its databases live in."}
        </li>
        <li>
          Create a database in it on the <a href={href("orgs", org, "databases")}>Databases</a> page (or{" "}
          <code>shoal db create &lt;name&gt;</code>).
        </li>
        <li>
          On the database's Tokens tab, mint a database token and connect with <code>@libsql/client</code>, or
          open the SQL editor.
        </li>
      </ol>
      {!canWrite && <p class="hint">As a viewer you can't create these: ask an owner or admin.</p>}
    </Section>
  );
}

/** The overages switch (core operation 3: `PATCH /v1/organizations/{org}` `{"overages"}`). */
function Overages({ unlimited }: { unlimited: boolean }) {
  const { org, canWrite, reloadOrg } = useOrg();
  const overages = useAction();
  const [saved, setSaved] = useState<string>();
  const toggle = async () => {
    const want = !org.overages;
    setSaved(undefined);
    const done = await overages.run(() =>
      api.patch<{ organization: Organization }>(orgPath(org.slug), { overages: want }),
    );
    if (done) {
      setSaved(want ? "Overages are on." : "Overages are off.");
      reloadOrg();
    }
  };
  return (
    <Section title="Overages">
      <p>
        With overages on, usage past the plan's quotas is allowed and nothing is blocked. Overages are{" "}
        <strong>{org.overages ? "on" : "off"}</strong>.
      </p>
      {unlimited && (
        <p class="hint">
          This organization's plan has no quotas, so nothing is ever blocked and overages change nothing until
          it gets some.
        </p>
      )}
      {canWrite ? (
        <Button
          kind={unlimited ? undefined : "primary"}
          busy={overages.busy}
          onClick={toggle}
          aria-pressed={org.overages}
        >
          {org.overages ? "Turn overages off" : "Turn overages on"}
        </Button>
      ) : (
        <p class="hint">Viewers can't change this.</p>
      )}
      <ErrorNote message={overages.error} />
      <Notice message={saved} />
    </Section>
  );
}
