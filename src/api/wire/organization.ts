import { z } from "@hono/zod-openapi";
import type { Member, Organization } from "../../domain/views.js";

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
    blocked_reads: z.boolean(),
    blocked_writes: z.boolean(),
    require_mfa: z.boolean(),
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
  };
}

export const MemberWire = z
  .object({
    username: z.string(),
    role: z.enum(["owner", "admin", "member", "viewer"]),
    email: z.string(),
  })
  .openapi("Member");

export function memberWire(m: Member): z.infer<typeof MemberWire> {
  return { username: m.username, role: m.role, email: m.email };
}
