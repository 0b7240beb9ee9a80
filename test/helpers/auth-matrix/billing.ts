import { type MatrixEntry, o } from "./types.js";

export const billingMatrix: Record<string, MatrixEntry> = {
  "GET /v1/organizations/{organizationName}/plans": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/plans`,
  },
  "GET /v1/organizations/{organizationName}/subscription": {
    kind: "org",
    scope: "read",
    viewer: "allow",
    path: (f) => `${o(f)}/subscription`,
  },
  // Changing a plan is the instance administrator's: even the organization's owner is refused.
  "POST /v1/organizations/{organizationName}/subscription": {
    kind: "admin",
    path: (f) => `${o(f)}/subscription`,
    body: { plan: "self-hosted" },
  },
  // Organization-wide figures: viewers may read them, group-scoped tokens may not.
  "GET /v1/organizations/{organizationName}/usage": {
    kind: "org",
    scope: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/usage`,
  },
  "GET /v1/organizations/{organizationName}/invoices": {
    kind: "org",
    scope: "org",
    viewer: "allow",
    path: (f) => `${o(f)}/invoices`,
  },
  "GET /v1/admin/plans": { kind: "admin", path: () => "/v1/admin/plans" },
  "POST /v1/admin/plans": { kind: "admin", path: () => "/v1/admin/plans", body: { name: "matrix" } },
  "PATCH /v1/admin/plans/{plan}": {
    kind: "admin",
    path: () => "/v1/admin/plans/no-such-plan",
    body: { price: "1" },
  },
  "DELETE /v1/admin/plans/{plan}": { kind: "admin", path: () => "/v1/admin/plans/no-such-plan" },
  "POST /v1/admin/organizations/{organizationName}/plan": {
    kind: "admin",
    path: (f) => `/v1/admin/organizations/${f.org}/plan`,
    body: { plan: "self-hosted" },
  },
};
