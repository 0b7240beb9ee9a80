import { Button } from "../ui/kit.js";

/** Turso's fine-grained actions, with what a person reads for each. */
export const TABLE_ACTIONS = [
  ["data_read", "Read rows"],
  ["data_add", "Insert rows"],
  ["data_update", "Update rows"],
  ["data_delete", "Delete rows"],
  ["schema_add", "Create tables"],
  ["schema_update", "Alter tables"],
  ["schema_delete", "Drop tables"],
] as const;

/** One rule being edited: tables as typed (comma-separated; empty: every table) and its actions. */
export interface RuleDraft {
  tables: string;
  actions: string[];
}

export const newRule = (): RuleDraft => ({ tables: "", actions: ["data_read"] });

/** The rules as the API takes them (`fine_grained_permissions`). */
export function rulesOf(drafts: RuleDraft[]): Array<{ t: string[] | null; a: string[] }> {
  return drafts.map((d) => {
    const tables = d.tables
      .split(",")
      .map((t) => t.trim())
      .filter((t) => t !== "");
    return { t: tables.length === 0 ? null : tables, a: d.actions };
  });
}

/**
 * The editor of a token's table-level limits: each rule names tables (none: every table) and
 * what the token may do to them. Rules add up; whatever no rule allows is refused.
 */
export function TableRules(props: { rules: RuleDraft[]; onChange: (rules: RuleDraft[]) => void }) {
  const { rules, onChange } = props;
  const set = (i: number, rule: RuleDraft) => onChange(rules.map((r, j) => (j === i ? rule : r)));
  return (
    <div class="table-rules">
      {rules.map((rule, i) => (
        <fieldset class="seed" key={i}>
          <legend>Rule {i + 1}</legend>
          <label class="label" for={`rule-${i}-tables`}>
            Tables
          </label>
          <input
            id={`rule-${i}-tables`}
            value={rule.tables}
            placeholder="every table"
            aria-describedby={`rule-${i}-hint`}
            onInput={(e) => set(i, { ...rule, tables: e.currentTarget.value })}
          />
          <span class="hint" id={`rule-${i}-hint`}>
            Comma-separated table names; leave empty for every table.
          </span>
          <div class="row">
            {TABLE_ACTIONS.map(([action, label]) => (
              <label class="check" key={action}>
                <input
                  type="checkbox"
                  checked={rule.actions.includes(action)}
                  onChange={(e) =>
                    set(i, {
                      ...rule,
                      actions: e.currentTarget.checked
                        ? [...rule.actions, action]
                        : rule.actions.filter((a) => a !== action),
                    })
                  }
                />
                {label}
              </label>
            ))}
          </div>
          {rules.length > 1 && (
            <Button onClick={() => onChange(rules.filter((_, j) => j !== i))}>Remove rule {i + 1}</Button>
          )}
        </fieldset>
      ))}
      <Button onClick={() => onChange([...rules, newRule()])}>Add a rule</Button>
    </div>
  );
}
