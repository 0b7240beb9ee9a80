/**
 * How each management route is protected. Every route registered in the app must appear here; the
 * auth-matrix test fails when one is missing, so a new route can't ship without security tests.
 */
export interface Fixture {
  org: string;
  group: string;
  database: string;
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
  /** For org routes: the status a non-member gets (403, except where 404 hides existence). */
  stranger?: 403 | 404;
  path: (f: Fixture) => string;
  body?: unknown;
}

const o = (f: Fixture) => `/v1/organizations/${f.org}`;

export const AUTH_MATRIX: Record<string, MatrixEntry> = {
  "GET /health": { kind: "public", path: () => "/health" },
  "GET /v1/locations": { kind: "public", path: () => "/v1/locations" },

  "POST /v1/auth/api-tokens/{tokenName}": { kind: "user", path: () => "/v1/auth/api-tokens/matrix" },
  "GET /v1/auth/api-tokens": { kind: "user", path: () => "/v1/auth/api-tokens" },
  "DELETE /v1/auth/api-tokens/{tokenName}": { kind: "user", path: () => "/v1/auth/api-tokens/none" },
  "GET /v1/auth/validate": { kind: "user", path: () => "/v1/auth/validate" },
  "GET /v1/auth/api-tokens/validate": { kind: "user", path: () => "/v1/auth/api-tokens/validate" },

  "GET /v1/organizations": { kind: "user", path: () => "/v1/organizations" },
  "POST /v1/organizations": {
    kind: "user",
    path: () => "/v1/organizations?dry_run=true",
    body: { name: "Matrix" },
  },
  "GET /v1/organizations/{organizationName}": { kind: "org", viewer: "allow", stranger: 404, path: o },
  "PATCH /v1/organizations/{organizationName}": {
    kind: "org",
    viewer: "deny",
    path: o,
    body: { overages: true },
  },
  "DELETE /v1/organizations/{organizationName}": { kind: "org", viewer: "deny", path: o },

  "GET /v1/organizations/{organizationName}/members": {
    kind: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/members`,
  },
  "POST /v1/organizations/{organizationName}/members": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/members`,
    body: { username: "nobody-here" },
  },
  "POST /v1/organizations/{organizationName}/members/{username}": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/members/nobody-here`,
    body: {},
  },
  "DELETE /v1/organizations/{organizationName}/members/{username}": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/members/nobody-here`,
  },

  "GET /v1/organizations/{organizationName}/groups": {
    kind: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/groups`,
  },
  "POST /v1/organizations/{organizationName}/groups": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/groups`,
    body: { name: "matrix-group", location: "aws-us-east-1" },
  },
  "GET /v1/organizations/{organizationName}/groups/{groupName}": {
    kind: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/groups/${f.group}`,
  },
  "DELETE /v1/organizations/{organizationName}/groups/{groupName}": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}`,
  },
  "POST /v1/organizations/{organizationName}/groups/{groupName}/locations/{location}": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/locations/aws-eu-west-1`,
  },
  "DELETE /v1/organizations/{organizationName}/groups/{groupName}/locations/{location}": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/locations/aws-eu-west-1`,
  },

  "GET /v1/organizations/{organizationName}/databases": {
    kind: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/databases`,
  },
  "POST /v1/organizations/{organizationName}/databases": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/databases`,
    body: { name: "matrix-db", group: "default" },
  },
  "GET /v1/organizations/{organizationName}/databases/{databaseName}": {
    kind: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}`,
  },
  "DELETE /v1/organizations/{organizationName}/databases/{databaseName}": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/databases/${f.database}`,
  },

  "POST /v1/organizations/{organizationName}/databases/{databaseName}/auth/tokens": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/databases/${f.database}/auth/tokens`,
  },
  "POST /v1/organizations/{organizationName}/groups/{groupName}/auth/tokens": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/auth/tokens`,
  },
  "POST /v1/organizations/{organizationName}/databases/{databaseName}/auth/rotate": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/databases/${f.database}/auth/rotate`,
  },
  "POST /v1/organizations/{organizationName}/groups/{groupName}/auth/rotate": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/auth/rotate`,
  },
  "GET /v1/organizations/{organizationName}/databases/{databaseName}/configuration": {
    kind: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}/configuration`,
  },
  "PATCH /v1/organizations/{organizationName}/databases/{databaseName}/configuration": {
    kind: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/databases/${f.database}/configuration`,
    body: { block_writes: true },
  },
  "GET /v1/organizations/{organizationName}/databases/{databaseName}/usage": {
    kind: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}/usage`,
  },
  "GET /v1/organizations/{organizationName}/databases/{databaseName}/stats": {
    kind: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}/stats`,
  },

  "GET /v1/organizations/{organizationName}/databases/{databaseName}/instances": {
    kind: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}/instances`,
  },
  "GET /v1/organizations/{organizationName}/databases/{databaseName}/instances/{instanceName}": {
    kind: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}/instances/aws-us-east-1`,
  },
  "GET /v1/organizations/{organizationName}/groups/{groupName}/locations/{location}/wait": {
    kind: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/groups/${f.group}/locations/aws-us-east-1/wait`,
  },

  "POST /v1/admin/users": {
    kind: "admin",
    path: () => "/v1/admin/users",
    body: { username: "x", email: "x@y" },
  },
  "GET /v1/admin/users": { kind: "admin", path: () => "/v1/admin/users" },
  "DELETE /v1/admin/users/{username}": { kind: "admin", path: () => "/v1/admin/users/nobody-here" },
};
