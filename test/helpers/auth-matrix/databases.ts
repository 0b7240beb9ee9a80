import { type MatrixEntry, o } from "./types.js";

export const databasesMatrix: Record<string, MatrixEntry> = {
  "GET /v1/organizations/{organizationName}/databases": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/databases`,
  },
  "POST /v1/organizations/{organizationName}/databases": {
    kind: "org",
    scope: "db:create",
    viewer: "deny",
    path: (f) => `${o(f)}/databases`,
    body: { name: "matrix-db", group: "default" },
  },
  "GET /v1/organizations/{organizationName}/databases/{databaseName}": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}`,
  },
  "DELETE /v1/organizations/{organizationName}/databases/{databaseName}": {
    kind: "org",
    scope: "db:delete",
    viewer: "deny",
    path: (f) => `${o(f)}/databases/${f.database}`,
  },
  "POST /v1/organizations/{organizationName}/databases/{databaseName}/auth/tokens": {
    kind: "org",
    scope: "db:mint-token",
    viewer: "deny",
    path: (f) => `${o(f)}/databases/${f.database}/auth/tokens`,
  },
  "POST /v1/organizations/{organizationName}/databases/{databaseName}/auth/rotate": {
    kind: "org",
    scope: "db:rotate-creds",
    viewer: "deny",
    path: (f) => `${o(f)}/databases/${f.database}/auth/rotate`,
  },
  "GET /v1/organizations/{organizationName}/databases/{databaseName}/configuration": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}/configuration`,
  },
  "PATCH /v1/organizations/{organizationName}/databases/{databaseName}/configuration": {
    kind: "org",
    scope: "db:configure",
    viewer: "deny",
    path: (f) => `${o(f)}/databases/${f.database}/configuration`,
    body: { block_writes: true },
  },
  "GET /v1/organizations/{organizationName}/databases/{databaseName}/usage": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}/usage`,
  },
  "GET /v1/organizations/{organizationName}/databases/{databaseName}/stats": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}/stats`,
  },
  "GET /v1/organizations/{organizationName}/databases/{databaseName}/instances": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}/instances`,
  },
  "GET /v1/organizations/{organizationName}/databases/{databaseName}/instances/{instanceName}": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/databases/${f.database}/instances/aws-us-east-1`,
  },
};
