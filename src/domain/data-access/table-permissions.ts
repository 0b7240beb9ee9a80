import { asciiLower } from "../../engine/sql-words.js";
import {
  EVERY_TABLE,
  type TableAction,
  type TableUse,
  type TableUses,
} from "../../engine/statement-tables.js";
import { tablePermissionErrors } from "./errors.js";

/** Turso's fine-grained actions, in the order its documentation lists them. */
export const TABLE_ACTIONS: readonly TableAction[] = [
  "data_read",
  "data_add",
  "data_update",
  "data_delete",
  "schema_add",
  "schema_update",
  "schema_delete",
];

/** One rule as Turso's API and tokens carry it: tables `t` (none: every table) may have actions `a`. */
export interface TablePermission {
  t: string[] | null;
  a: TableAction[];
}

/** Rules a token may carry; more is a mistake rather than a need (one rule per table and action set). */
const MAX_RULES = 100;
const MAX_TABLES = 100;
const MAX_NAME = 256;

/**
 * Checks rules sent to mint a token, or found in a token's `perm` claim, and returns them in the
 * canonical form the token carries (`t` null for every table, names as sent). Throws a
 * 400-class error saying which rule is wrong and how; `where` names the field for that message.
 */
export function parseTablePermissions(raw: unknown, where: string): TablePermission[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw tablePermissionErrors.notList(where);
  if (raw.length > MAX_RULES) throw tablePermissionErrors.tooMany(where, MAX_RULES);
  return raw.map((rule, i) => parseRule(rule, `${where}[${i}]`));
}

function parseRule(rule: unknown, where: string): TablePermission {
  if (typeof rule !== "object" || rule === null || Array.isArray(rule))
    throw tablePermissionErrors.notRule(where);
  const { t, a } = rule as Record<string, unknown>;
  if (t !== undefined && t !== null && !Array.isArray(t)) throw tablePermissionErrors.badTables(where);
  const tables = (t ?? []) as unknown[];
  if (tables.length > MAX_TABLES) throw tablePermissionErrors.tooManyTables(where, MAX_TABLES);
  for (const name of tables)
    if (typeof name !== "string" || name.length === 0 || name.length > MAX_NAME)
      throw tablePermissionErrors.badTables(where);
  if (!Array.isArray(a) || a.length === 0) throw tablePermissionErrors.noActions(where);
  for (const action of a)
    if (typeof action !== "string" || !TABLE_ACTIONS.includes(action as TableAction))
      throw tablePermissionErrors.unknownAction(where, String(action), TABLE_ACTIONS);
  return { t: tables.length === 0 ? null : (tables as string[]), a: [...new Set(a as TableAction[])] };
}

/**
 * What a token's rules allow, for checking a statement's table uses fast. Rules add up: an
 * action is allowed on a table when some rule names it (or every table) with that action.
 * Reading SQLite's own tables (sqlite_schema, sqlite_sequence, ...) is always allowed, as on Turso.
 */
export class TableRights {
  private readonly everywhere = new Set<TableAction>();
  private readonly byTable = new Map<string, Set<TableAction>>();

  constructor(readonly rules: readonly TablePermission[]) {
    for (const rule of rules) {
      if (rule.t === null) for (const a of rule.a) this.everywhere.add(a);
      else
        for (const name of rule.t) {
          const key = asciiLower(name);
          const set = this.byTable.get(key) ?? new Set<TableAction>();
          for (const a of rule.a) set.add(a);
          this.byTable.set(key, set);
        }
    }
  }

  allows(table: string, action: TableAction): boolean {
    if (this.everywhere.has(action)) return true;
    if (table === EVERY_TABLE) return false;
    if (action === "data_read" && table.startsWith("sqlite_")) return true;
    return this.byTable.get(table)?.has(action) ?? false;
  }

  /** The first thing `uses` does that the rules don't allow (the transport says so); undefined if none. */
  firstRefused(uses: TableUses): TableUse | { beyond: string } | undefined {
    if (uses.beyond) return { beyond: uses.beyond };
    return uses.uses.find((use) => !this.allows(use.table, use.action));
  }
}

/** Rights per token's rules, kept while the claims object they came from is alive (claims are cached). */
const compiled = new WeakMap<object, TableRights | null>();

/**
 * The rights a token's `perm` claim grants, or undefined when it carries none (the token is
 * limited only by its access level). A claim that isn't valid rules refuses the token.
 */
export function rightsOfClaims(claims: { perm?: unknown }): TableRights | undefined {
  const known = compiled.get(claims);
  if (known !== undefined) return known ?? undefined;
  let rights: TableRights | null = null;
  if (claims.perm !== undefined && claims.perm !== null) {
    let rules: TablePermission[];
    try {
      rules = parseTablePermissions(claims.perm, "perm");
    } catch (e) {
      throw tablePermissionErrors.badClaim(e instanceof Error ? e.message : String(e));
    }
    // An empty list is Turso's template default: no table-level limits.
    if (rules.length > 0) rights = new TableRights(rules);
  }
  compiled.set(claims, rights);
  return rights ?? undefined;
}
