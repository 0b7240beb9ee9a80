import type { MatrixEntry } from "./types.js";

export const adminMatrix: Record<string, MatrixEntry> = {
  "POST /v1/admin/users": {
    kind: "admin",
    path: () => "/v1/admin/users",
    body: { username: "x", email: "x@y" },
  },
  "GET /v1/admin/users": { kind: "admin", path: () => "/v1/admin/users" },
  "DELETE /v1/admin/users/{username}": { kind: "admin", path: () => "/v1/admin/users/nobody-here" },
  "GET /v1/admin/nodes": { kind: "admin", path: () => "/v1/admin/nodes" },
  "GET /v1/admin/node": { kind: "admin", path: () => "/v1/admin/node" },
  "DELETE /v1/admin/nodes/{node}": { kind: "admin", path: () => "/v1/admin/nodes/no-such-node" },
  "GET /v1/admin/backups": { kind: "admin", path: () => "/v1/admin/backups" },
  "GET /v1/admin/backups/{organizationName}/{databaseName}": {
    kind: "admin",
    path: () => "/v1/admin/backups/nobody/nothing",
  },
  "POST /v1/admin/backups/{organizationName}/{databaseName}/restore": {
    kind: "admin",
    path: () => "/v1/admin/backups/nobody/nothing/restore",
    body: {},
  },
  "POST /v1/admin/backups/restore-missing": {
    kind: "admin",
    path: () => "/v1/admin/backups/restore-missing",
    body: {},
  },
  "POST /v1/admin/groups/{organizationName}/{groupName}/failover": {
    kind: "admin",
    path: () => "/v1/admin/groups/no-such-org/g/failover",
    body: { location: "aws-us-east-1" },
  },
};
