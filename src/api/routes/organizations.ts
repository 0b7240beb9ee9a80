import { z } from "@hono/zod-openapi";
import { updateOrganization } from "../../domain/accounts/organization-settings.js";
import {
  createOrganization,
  deleteOrganization,
  getOrganization,
  listOrganizations,
} from "../../domain/accounts/organizations.js";
import { apiErrors } from "../errors.js";
import { OrgParams, optional, PageQuery, PaginationWire } from "../params.js";
import { type Route, route } from "../route.js";
import {
  OrganizationV2Wire,
  OrganizationWire,
  organizationV2Wire,
  organizationWire,
  RetrievedOrganizationWire,
  retrievedOrganizationWire,
} from "../wire/organization.js";

const tags = ["Organizations"];

/**
 * `@tursodatabase/api` (every version so far) sends this User-Agent and reads `.organizations`
 * from the v1 list, so the spec's bare array would reach its users as an empty list.
 */
function wantsWrappedList(userAgent: string | undefined): boolean {
  return userAgent?.startsWith("@tursodatabase/api") ?? false;
}
const Wrapped = z.object({ organization: OrganizationWire });

export const organizationRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/organizations",
    summary: "List organizations",
    description:
      "Organizations the caller belongs to, as a bare JSON array (as Turso's specification has it). `@tursodatabase/api` reads `organizations` from an object instead, so a request with its User-Agent gets `{organizations: [...]}`.",
    tags,
    response: z.union([z.array(OrganizationWire), z.object({ organizations: z.array(OrganizationWire) })]),
    handler: async ({ ctx, c }) => {
      const orgs = (await listOrganizations(ctx)).items.map(organizationWire);
      return wantsWrappedList(c.req.header("user-agent")) ? { organizations: orgs } : orgs;
    },
  }),
  route({
    method: "get",
    path: "/v2/organizations",
    summary: "List organizations (v2)",
    description:
      "Organizations the caller belongs to, with their ids: what the turso CLI's `org list` reads. With `limit`, one page at a time: pass `pagination.next` as `cursor` until it is null.",
    tags,
    query: PageQuery,
    response: z.object({ organizations: z.array(OrganizationV2Wire), pagination: PaginationWire }),
    handler: async ({ ctx, query }) => {
      const page = await listOrganizations(ctx, { limit: query.limit, cursor: query.cursor });
      return { organizations: page.items.map(organizationV2Wire), pagination: { next: page.next } };
    },
  }),
  route({
    method: "post",
    path: "/v1/organizations",
    summary: "Create a team organization",
    description:
      "Creates a team organization owned by the caller; its slug is derived from the name. With `dry_run=true` only the checks run.",
    tags,
    query: z.object({ dry_run: optional(z.enum(["true", "false"])) }),
    body: z.object({ name: z.string().openapi({ example: "Acme Corp" }) }),
    response: z.object({ organization: OrganizationWire, org: OrganizationWire }),
    errors: { 400: "Invalid name.", 409: "An organization or user with that slug exists." },
    idempotent: true,
    handler: async ({ ctx, query, body }) => {
      const org = organizationWire(
        await createOrganization(ctx, { name: body.name, dryRun: query.dry_run === "true" }),
      );
      // `org` is the key the turso CLI reads; `organization` matches every other answer.
      return { organization: org, org };
    },
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}",
    summary: "Retrieve an organization",
    tags,
    description: "The organization, with its `id` (what the v3 API's paths take).",
    params: OrgParams,
    response: z.object({ organization: RetrievedOrganizationWire }),
    errors: { 404: "organization not found" },
    handler: async ({ ctx, params }) => ({
      organization: retrievedOrganizationWire(await getOrganization(ctx, params.organizationName)),
    }),
  }),
  route({
    method: "patch",
    path: "/v1/organizations/{organizationName}",
    summary: "Update an organization",
    description:
      "Owners, admins and members may change `overages`. The body is read as JSON whatever its content type.",
    tags,
    params: OrgParams,
    body: z.object({
      overages: optional(z.boolean()).openapi({ description: "Allow usage past the plan's quotas." }),
      restore_enabled: optional(z.boolean()).openapi({
        description:
          "Shoal and Turso's dashboard: keep deleted databases and groups restorable (the default). Owners and admins only. Off, a deletion is final.",
      }),
      require_mfa: optional(z.boolean()),
    }),
    response: Wrapped,
    errors: { 400: "A field has the wrong type.", 403: "Not a member, or a viewer." },
    handler: async ({ ctx, params, body }) => {
      if (body.require_mfa === true) {
        throw apiErrors.noMfa();
      }
      const org = await updateOrganization(ctx, params.organizationName, {
        overages: body.overages,
        restoreEnabled: body.restore_enabled,
      });
      return { organization: organizationWire(org) };
    },
  }),
  route({
    method: "delete",
    path: "/v1/organizations/{organizationName}",
    summary: "Delete a team organization",
    description: "Owner only. Deletes every group and database of the organization.",
    tags,
    params: OrgParams,
    response: Wrapped,
    errors: { 400: "A personal organization can't be deleted.", 403: "Not the owner." },
    handler: async ({ ctx, params }) => ({
      organization: organizationWire(await deleteOrganization(ctx, params.organizationName)),
    }),
  }),
];
