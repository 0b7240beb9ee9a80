import { useState } from "preact/hooks";
import { api, orgPath } from "../api.js";
import { useOrg } from "../context.js";
import { useAction, useLoad } from "../hooks.js";
import { href, navigate } from "../router.js";
import type { Group } from "../types.js";
import { Button, ErrorNote, Field, Section } from "../ui/kit.js";

type Seed = "empty" | "branch" | "restore";

/** `datetime-local` gives local wall time without a zone; Shoal wants RFC 3339 with one. */
function toRfc3339(local: string): string {
  const t = new Date(local);
  if (Number.isNaN(t.getTime())) throw new Error("Choose the moment to restore from.");
  return t.toISOString();
}

export function NewDatabase() {
  const { org } = useOrg();
  const groups = useLoad(() => api.get<{ groups: Group[] }>(`${orgPath(org.slug)}/groups`), [org.slug]);
  const [name, setName] = useState("");
  const [group, setGroup] = useState("");
  const [seed, setSeed] = useState<Seed>("empty");
  const [source, setSource] = useState("");
  const [moment, setMoment] = useState("");
  const [sizeLimit, setSizeLimit] = useState("");
  const action = useAction();
  // `default` first (what the API and the CLI use when no group is named), then by name.
  const choices = [...(groups.data?.groups ?? [])].sort(
    (a, b) => Number(b.name === "default") - Number(a.name === "default") || a.name.localeCompare(b.name),
  );
  const chosenGroup = group || choices[0]?.name || "";
  const submit = async (e: Event) => {
    e.preventDefault();
    const made = await action.run(async () => {
      const body: Record<string, unknown> = { name, group: chosenGroup };
      if (seed !== "empty") {
        body.seed = {
          type: "database",
          name: source,
          ...(seed === "restore" ? { timestamp: toRfc3339(moment) } : {}),
        };
      }
      if (sizeLimit.trim()) body.size_limit = sizeLimit.trim();
      return api.post<{ database: { Name: string } }>(`${orgPath(org.slug)}/databases`, body);
    });
    if (made) navigate(href("orgs", org.slug, "databases", made.database.Name));
  };
  if (groups.data && groups.data.groups.length === 0) {
    return (
      <Section title="New database">
        <p>
          A database lives in a group. <a href={href("orgs", org.slug, "groups")}>Create a group</a> first.
        </p>
      </Section>
    );
  }
  return (
    <Section title="New database">
      <form class="stack-form" onSubmit={submit}>
        <div class="inline-form">
          <Field label="Database name" hint="Lowercase letters, digits and dashes.">
            <input value={name} required autocomplete="off" onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field label="Group">
            <select value={chosenGroup} onChange={(e) => setGroup(e.currentTarget.value)}>
              {choices.map((g) => (
                <option key={g.uuid} value={g.name}>
                  {g.name} ({g.locations.join(", ")})
                </option>
              ))}
            </select>
          </Field>
          <Field label="Size limit" hint="Optional, e.g. 256mb.">
            <input value={sizeLimit} onInput={(e) => setSizeLimit(e.currentTarget.value)} />
          </Field>
        </div>
        <SeedChoice
          seed={seed}
          source={source}
          moment={moment}
          onSeed={setSeed}
          onSource={setSource}
          onMoment={setMoment}
        />
        <ErrorNote message={action.error ?? groups.error} />
        <Button type="submit" kind="primary" busy={action.busy}>
          {action.busy ? "Creating the database…" : "Create database"}
        </Button>
      </form>
    </Section>
  );
}

/** What a new database starts with: nothing, a copy of another database, or its past state. */
function SeedChoice(props: {
  seed: Seed;
  source: string;
  moment: string;
  onSeed: (s: Seed) => void;
  onSource: (name: string) => void;
  onMoment: (local: string) => void;
}) {
  const { seed, source, moment } = props;
  return (
    <fieldset class="seed">
      <legend>Start with</legend>
      {(
        [
          ["empty", "An empty database"],
          ["branch", "A copy of another database (a branch)"],
          ["restore", "Another database as it was at a moment (point-in-time restore)"],
        ] as const
      ).map(([value, label]) => (
        <label key={value} class="radio">
          <input
            type="radio"
            name="seed"
            value={value}
            checked={seed === value}
            onChange={() => props.onSeed(value)}
          />
          {label}
        </label>
      ))}
      {seed !== "empty" && (
        <div class="inline-form">
          <Field label="Source database">
            <input
              value={source}
              required
              autocomplete="off"
              onInput={(e) => props.onSource(e.currentTarget.value)}
            />
          </Field>
          {seed === "restore" && (
            <Field label="Moment to restore" hint="Your local time; history goes back 24 hours by default.">
              <input
                type="datetime-local"
                step={1}
                required
                value={moment}
                onInput={(e) => props.onMoment(e.currentTarget.value)}
              />
            </Field>
          )}
        </div>
      )}
    </fieldset>
  );
}
