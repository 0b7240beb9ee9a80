import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Organization, Role, User } from "./types.js";

export interface Me {
  user: User;
  orgs: Organization[];
  reloadOrgs: () => void;
  signOut: (message?: string) => void;
}

/** The organization being looked at, the caller's role in it, and what that role may do. */
export interface OrgScope {
  org: Organization;
  role: Role;
  /** Create, change and delete groups and databases, mint database tokens, set overages. */
  canWrite: boolean;
  /** Manage members and invites, see everyone's organization tokens and the audit log. */
  canManage: boolean;
  reloadOrg: () => void;
}

export const MeContext = createContext<Me | null>(null);
export const OrgContext = createContext<OrgScope | null>(null);

export function useMe(): Me {
  const me = useContext(MeContext);
  if (!me) throw new Error("useMe outside the signed-in console");
  return me;
}

export function useOrg(): OrgScope {
  const o = useContext(OrgContext);
  if (!o) throw new Error("useOrg outside an organization");
  return o;
}

export function scopeOf(org: Organization, role: Role, reloadOrg: () => void): OrgScope {
  return {
    org,
    role,
    canWrite: role !== "viewer",
    canManage: role === "owner" || role === "admin",
    reloadOrg,
  };
}
