import { type MatrixEntry, o } from "./types.js";

export const groupsMatrix: Record<string, MatrixEntry> = {
  "GET /v1/organizations/{organizationName}/groups": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/groups`,
  },
  "POST /v1/organizations/{organizationName}/groups": {
    kind: "org",
    scope: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/groups`,
    body: { name: "matrix-group", location: "aws-us-east-1" },
  },
  "GET /v1/organizations/{organizationName}/groups/{groupName}": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/groups/${f.group}`,
  },
  "DELETE /v1/organizations/{organizationName}/groups/{groupName}": {
    kind: "org",
    scope: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}`,
  },
  "POST /v1/organizations/{organizationName}/groups/{groupName}/locations/{location}": {
    kind: "org",
    scope: "group:configure",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/locations/aws-eu-west-1`,
  },
  "DELETE /v1/organizations/{organizationName}/groups/{groupName}/locations/{location}": {
    kind: "org",
    scope: "group:configure",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/locations/aws-eu-west-1`,
  },
  "POST /v1/organizations/{organizationName}/groups/{groupName}/auth/tokens": {
    kind: "org",
    scope: "group:mint-token",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/auth/tokens`,
  },
  "POST /v1/organizations/{organizationName}/groups/{groupName}/auth/rotate": {
    kind: "org",
    scope: "group:rotate-creds",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/auth/rotate`,
  },
  "GET /v1/organizations/{organizationName}/groups/{groupName}/locations/{location}/wait": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/groups/${f.group}/locations/aws-us-east-1/wait`,
  },
  "GET /v1/organizations/{organizationName}/groups/{groupName}/configuration": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/groups/${f.group}/configuration`,
  },
  "PATCH /v1/organizations/{organizationName}/groups/{groupName}/configuration": {
    kind: "org",
    scope: "group:configure",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/configuration`,
    body: { delete_protection: true },
  },
  "POST /v1/organizations/{organizationName}/groups/{groupName}/rename": {
    kind: "org",
    scope: "group:configure",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/rename`,
    body: { Name: "matrix-renamed" },
  },
  "POST /v1/organizations/{organizationName}/groups/{groupName}/transfer": {
    kind: "org",
    scope: "org",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/transfer`,
    body: { organization: "no-such-org" },
  },
  "POST /v1/organizations/{organizationName}/groups/{groupName}/unarchive": {
    kind: "org",
    scope: "group:configure",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/unarchive`,
  },
  "POST /v1/organizations/{organizationName}/groups/{groupName}/update": {
    kind: "org",
    scope: "group:configure",
    viewer: "deny",
    path: (f) => `${o(f)}/groups/${f.group}/update`,
    body: {},
  },
};
