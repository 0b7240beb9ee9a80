import { z } from "@hono/zod-openapi";
import type { Member, Organization } from "../../domain/accounts/views.js";

export const OrganizationWire = z
  .object({
    name: z.string().openapi({
      description: "Display name; a personal organization is named `personal`.",
      example: "personal",
    }),
    slug: z.string().openapi({
      description: "Identifier used in paths; for a personal organization, the username.",
      example: "acme",
    }),
    type: z.enum(["personal", "team"]),
    overages: z
      .boolean()
      .openapi({ description: "Whether usage past the plan's quotas is allowed instead of blocked." }),
    blocked_reads: z.boolean().openapi({ description: "Reads are refused: a quota is used up." }),
    blocked_writes: z.boolean().openapi({ description: "Writes are refused: a quota is used up." }),
    require_mfa: z.boolean().openapi({ description: "Always false: Shoal has no multi-factor sign-in." }),
    plan_id: z
      .string()
      .openapi({ description: "The organization's plan (its quotas).", example: "self-hosted" }),
    plan_timeline: z
      .string()
      .openapi({ description: "Billing period of the plan; empty, since Shoal bills nothing.", example: "" }),
    platform: z
      .string()
      .openapi({ description: "Partner platform managing the organization; always empty.", example: "" }),
  })
  .openapi("Organization");

export function organizationWire(o: Organization): z.infer<typeof OrganizationWire> {
  return {
    name: o.name,
    slug: o.slug,
    type: o.type,
    overages: o.overages,
    blocked_reads: o.blockedReads,
    blocked_writes: o.blockedWrites,
    require_mfa: false,
    plan_id: o.plan,
    plan_timeline: "",
    platform: "",
  };
}

const orgId = z.string().openapi({
  description: "Organization id: the v3 API's paths take it.",
  example: "0eb771dd-6906-41ee-8553-eaa7715aeaf2",
});

/** Retrieve Organization's answer: the organization and its `id`, as Turso's v3 documents point to. */
export const RetrievedOrganizationWire = OrganizationWire.extend({
  id: orgId,
  restore_enabled: z.boolean().openapi({
    description: "Whether deleted databases and groups are kept restorable (PATCH it to change).",
  }),
}).openapi("RetrievedOrganization");

export function retrievedOrganizationWire(o: Organization): z.infer<typeof RetrievedOrganizationWire> {
  return { id: o.id, ...organizationWire(o), restore_enabled: o.restoreEnabled };
}

/** The v2 list entry (the turso CLI's `org list`): the organization plus its `id` and `stripe_id`. */
export const OrganizationV2Wire = OrganizationWire.extend({
  id: orgId,
  stripe_id: z.string().openapi({ description: "Always empty: there is no billing account.", example: "" }),
}).openapi("OrganizationV2");

export function organizationV2Wire(o: Organization): z.infer<typeof OrganizationV2Wire> {
  return { id: o.id, ...organizationWire(o), stripe_id: "" };
}

export const MemberWire = z
  .object({
    username: z.string().openapi({ example: "bob" }),
    role: z.enum(["owner", "admin", "member", "viewer"]),
    email: z.string().openapi({ example: "bob@example.com" }),
  })
  .openapi("Member");

export function memberWire(m: Member): z.infer<typeof MemberWire> {
  return { username: m.username, role: m.role, email: m.email };
}
