import type { MatrixEntry } from "./types.js";

/** The v3 organization prefix of a fixture path: organizations, groups and databases by id. */
const v3 = (f: { orgId: string }) => `/v3/organizations/${f.orgId}`;

export const v3Matrix: Record<string, MatrixEntry> = {
  "GET /v3/organizations/{organizationId}/databases": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${v3(f)}/databases`,
  },
  "POST /v3/organizations/{organizationId}/databases": {
    kind: "org",
    scope: "db:create",
    viewer: "deny",
    path: (f) => `${v3(f)}/databases`,
    body: { name: "matrix-v3-db", group: "default" },
  },
  "GET /v3/organizations/{organizationId}/databases/{databaseId}": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${v3(f)}/databases/${f.databaseId}`,
  },
  "DELETE /v3/organizations/{organizationId}/databases/{databaseId}": {
    kind: "org",
    scope: "db:delete",
    viewer: "deny",
    path: (f) => `${v3(f)}/databases/${f.databaseId}`,
  },
  "POST /v3/organizations/{organizationId}/databases/{databaseId}/auth/tokens": {
    kind: "org",
    scope: "db:mint-token",
    viewer: "deny",
    path: (f) => `${v3(f)}/databases/${f.databaseId}/auth/tokens`,
  },
  "GET /v3/organizations/{organizationId}/groups": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${v3(f)}/groups`,
  },
  "GET /v3/organizations/{organizationId}/groups/{groupId}": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${v3(f)}/groups/${f.groupId}`,
  },
  // Restoring is an owner's or an admin's call, never a group token's.
  "POST /v3/organizations/{organizationId}/databases/{databaseId}/restore": {
    kind: "org",
    scope: "org",
    viewer: "deny",
    path: (f) => `${v3(f)}/databases/${f.databaseId}/restore`,
  },
  "GET /v3/organizations/{organizationId}/deleted-groups": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${v3(f)}/deleted-groups`,
  },
  "POST /v3/organizations/{organizationId}/groups/{groupId}/restore": {
    kind: "org",
    scope: "org",
    viewer: "deny",
    path: (f) => `${v3(f)}/groups/${f.groupId}/restore`,
  },
  "POST /v3/organizations/{organizationId}/groups/{groupId}/auth/tokens": {
    kind: "org",
    scope: "group:mint-token",
    viewer: "deny",
    path: (f) => `${v3(f)}/groups/${f.groupId}/auth/tokens`,
  },
};
