import type { Principal } from "./context.js";
import { coreErrors } from "./errors.js";

export type Role = "owner" | "admin" | "member" | "viewer";
export const ROLES: readonly Role[] = ["owner", "admin", "member", "viewer"];

/** What a group-scoped API token may be allowed to do (Turso's scope names). */
export const SCOPES = [
  "read",
  "db:create",
  "db:delete",
  "db:configure",
  "db:mint-token",
  "db:rotate-creds",
  "group:configure",
  "group:mint-token",
  "group:rotate-creds",
] as const;
export type Scope = (typeof SCOPES)[number];

const PRESETS: Record<string, readonly Scope[]> = { "read-only": ["read"], "full-access": SCOPES };

/**
 * Expands presets (`read-only`, `full-access`) and checks every name; tokens store and report
 * the expanded list, never a preset.
 */
export function expandScopes(names: readonly string[]): Scope[] {
  const out = new Set<Scope>();
  for (const name of names) {
    const preset = PRESETS[name];
    if (preset) for (const s of preset) out.add(s);
    else if ((SCOPES as readonly string[]).includes(name)) out.add(name as Scope);
    else throw coreErrors.invalidScope(name, [...SCOPES, ...Object.keys(PRESETS)].join(", "));
  }
  return SCOPES.filter((s) => out.has(s));
}

/**
 * What a caller wants to do inside an organization: a token scope, or one of the organization-level
 * actions that a group-scoped token is never allowed.
 */
export type OrgAction =
  | Scope
  | "group:create"
  | "group:delete"
  | "group:transfer"
  | "org:update"
  | "org:delete"
  | "org:jwks"
  | "org:restore"
  | "members:manage"
  | "audit:read"
  | "billing:manage"
  | "tokens:revoke";

const EDITORS: readonly Role[] = ["owner", "admin", "member"];
const ADMINS: readonly Role[] = ["owner", "admin"];

/** The roles allowed each action. Members change databases and groups; admins manage people. */
const ALLOWED: Record<OrgAction, readonly Role[]> = {
  read: ROLES,
  "db:create": EDITORS,
  "db:delete": EDITORS,
  "db:configure": EDITORS,
  "db:mint-token": EDITORS,
  "db:rotate-creds": EDITORS,
  "group:configure": EDITORS,
  "group:mint-token": EDITORS,
  "group:rotate-creds": EDITORS,
  "group:create": EDITORS,
  "group:delete": EDITORS,
  "group:transfer": ADMINS,
  "org:update": EDITORS,
  "org:delete": ["owner"],
  // A trusted key set can sign tokens for every database of the organization.
  "org:jwks": ADMINS,
  // Bringing a database back (and choosing whether deleted ones are kept) is an admin's call, as on Turso.
  "org:restore": ADMINS,
  "members:manage": ADMINS,
  "audit:read": ADMINS,
  "billing:manage": ADMINS,
  // Everyone may revoke their own organization tokens; whose tokens is decided by the verb.
  "tokens:revoke": ROLES,
};

/** Refuses an action the member's role doesn't allow, saying who may do it. */
export function requireRoleAllows(role: Role, action: OrgAction): void {
  if (!ALLOWED[action].includes(role)) {
    throw coreErrors.roleDenied(role, action);
  }
}

/** Whether a token's restrictions allow an action, whatever the user's role. */
export function checkTokenAllows(actor: Principal, action: OrgAction): void {
  if (actor.groupId === null) return;
  if (!(SCOPES as readonly string[]).includes(action)) {
    throw coreErrors.groupTokenCannot(action);
  }
  if (!actor.scopes?.includes(action as Scope)) {
    throw coreErrors.missingScope(action);
  }
}

/** A group-scoped token acts on its own group (and that group's databases) only. */
export function requireGroupInScope(actor: Principal, groupId: string, groupName: string): void {
  if (actor.groupId !== null && actor.groupId !== groupId) {
    throw coreErrors.otherGroup(groupName);
  }
}

/** The group a list is narrowed to for this token (null: no narrowing). */
export function tokenGroup(actor: Principal): string | null {
  return actor.groupId;
}

/** Whether the caller's API token is limited to an organization or a group. */
export function isRestricted(actor: Principal): boolean {
  return actor.orgId !== null || actor.groupId !== null;
}

/**
 * Refuses account-wide actions (instance administration, the user's own tokens and invites) to a
 * token limited to an organization or a group: such a token must never reach beyond its limits,
 * however broad its user's rights are.
 */
export function requireUnrestricted(actor: Principal, what: string): void {
  if (isRestricted(actor)) {
    throw coreErrors.needsUnrestrictedToken(what, actor.groupId !== null ? "a group" : "an organization");
  }
}

/** Instance administration: an administrator, calling with an unrestricted token. */
export function requireInstanceAdmin(actor: Principal, what: string): void {
  if (!actor.isAdmin) throw coreErrors.adminOnly(what);
  requireUnrestricted(actor, what);
}
