import type { MatrixEntry } from "./types.js";

const v2 = (f: { org: string }) => `/v2/organizations/${f.org}`;

export const jwksMatrix: Record<string, MatrixEntry> = {
  "GET /v2/organizations/{organizationName}/jwks": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${v2(f)}/jwks`,
  },
  "PUT /v2/organizations/{organizationName}/jwks/{name}": {
    kind: "org",
    scope: "org",
    viewer: "deny",
    // Refused callers are refused before the URL is ever fetched.
    path: (f) => `${v2(f)}/jwks/matrix`,
    body: { jwks_url: "http://127.0.0.1:1/jwks.json" },
  },
  "DELETE /v2/organizations/{organizationName}/jwks/{name}": {
    kind: "org",
    scope: "org",
    viewer: "deny",
    path: (f) => `${v2(f)}/jwks/matrix`,
  },
  "GET /v2/organizations/{organizationName}/jwks-template": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${v2(f)}/jwks-template?database=${f.database}`,
  },
};
