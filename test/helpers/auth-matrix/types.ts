/** The resources every matrix entry may point at: made once by the auth-matrix test. */
export interface Fixture {
  org: string;
  group: string;
  database: string;
  /** The same three by id, for the v3 routes. */
  orgId: string;
  groupId: string;
  databaseId: string;
}

export type Kind =
  /** No token needed; a token that is sent must be valid. */
  | "public"
  /** Any authenticated user; acts on the caller's own account. */
  | "user"
  /** Instance administrators only. */
  | "admin"
  /** Inside an organization; non-members are refused. */
  | "org";

export interface MatrixEntry {
  kind: Kind;
  /** For org routes: whether a viewer may call it. */
  viewer?: "allow" | "deny";
  /**
   * For org routes a viewer may call: the status it gets on the fixture (200, or 404 where the
   * fixture names nothing, as for revoking a token by an id that doesn't exist).
   */
  allowedStatus?: 200 | 404;
  /** For org routes: the status a non-member gets (403, except where 404 hides existence). */
  stranger?: 403 | 404;
  /**
   * For org routes: the API-token scope the route needs (Turso's names), or `org` for an
   * organization-level action that a group-scoped token may never do.
   */
  scope?:
    | "read"
    | "db:create"
    | "db:delete"
    | "db:configure"
    | "db:mint-token"
    | "db:rotate-creds"
    | "group:configure"
    | "group:mint-token"
    | "group:rotate-creds"
    | "org";
  path: (f: Fixture) => string;
  body?: unknown;
}

/** The organization prefix of a fixture path. */
export const o = (f: Fixture) => `/v1/organizations/${f.org}`;
