import { z } from "@hono/zod-openapi";
import { createInvite, deleteInvite, type Invite, listInvites } from "../../domain/accounts/invites.js";
import type { Organization } from "../../domain/accounts/views.js";
import type { ApiCtx } from "../env.js";
import { apiErrors } from "../errors.js";
import { OrgParams, optional, orgParam, pathParam } from "../params.js";
import { type Route, route } from "../route.js";
import { OrganizationWire, organizationWire } from "../wire/organization.js";

const tags = ["Invites"];
const Role = z.string().openapi({ description: "admin, member (default) or viewer", example: "member" });
const InviteParams = z.object({
  organizationName: orgParam,
  email: pathParam("email", "E-mail (or username) the invite is addressed to.", "carol@example.com"),
});
const TOKEN_DOC =
  "Secret the invited user may present to accept the invite (`POST /v1/user/invites/{id}/accept`); shown only in this answer.";
const errors = {
  400: "Invalid e-mail or role, or a personal organization.",
  403: "Only owners and admins manage invites.",
};

/** Turso's v1 invite: a Go struct serialised with its default PascalCase keys. */
const InviteV1Wire = z
  .object({
    ID: z.number().int().openapi({ example: 7 }),
    CreatedAt: z.string(),
    UpdatedAt: z.string(),
    DeletedAt: z.string().nullable(),
    Role: z.string().openapi({ example: "member" }),
    Email: z.string().openapi({ description: "Empty for an invite addressed to a username." }),
    Username: z.string().openapi({ description: "Empty for an invite addressed to an e-mail." }),
    OrganizationID: z.string(),
    Token: z.string().openapi({ description: `${TOKEN_DOC} Empty in lists.` }),
    Organization: OrganizationWire,
    Accepted: z.boolean().openapi({ description: "Always false: lists hold pending invites." }),
  })
  .openapi("InviteV1");

function inviteV1Wire(i: Invite, org: Organization, token = ""): z.infer<typeof InviteV1Wire> {
  return {
    ID: i.id,
    CreatedAt: i.createdAt,
    UpdatedAt: i.createdAt,
    DeletedAt: null,
    Role: i.role,
    Email: i.email ?? "",
    Username: i.username ?? "",
    OrganizationID: org.id,
    Token: token,
    Organization: organizationWire(org),
    Accepted: false,
  };
}

const InviteV2Wire = z
  .object({
    id: z.number().int().openapi({ example: 7 }),
    email: z.string().openapi({ description: "Empty for an invite addressed to a username." }),
    username: z
      .string()
      .optional()
      .openapi({ description: "Present for an invite addressed to a username." }),
    role: z.string().openapi({ example: "member" }),
    created_at: z.string(),
  })
  .openapi("InviteV2");

const inviteV2Wire = (i: Invite): z.infer<typeof InviteV2Wire> => ({
  id: i.id,
  email: i.email ?? "",
  ...(i.username !== null ? { username: i.username } : {}),
  role: i.role,
  created_at: i.createdAt,
});

const InviteCreatedV2Wire = InviteV2Wire.extend({
  organization: z.string().openapi({ description: "Organization slug.", example: "acme" }),
  token: z.string().openapi({ description: TOKEN_DOC }),
}).openapi("InviteCreatedV2");

const V1Body = z.object({ email: optional(z.string()), role: optional(Role) });

async function createV1(ctx: ApiCtx, slug: string, body: z.infer<typeof V1Body>) {
  if (!body.email) throw apiErrors.emailRequired();
  const made = await createInvite(ctx, slug, { email: body.email, role: body.role });
  return { invited: inviteV1Wire(made.invite, made.organization, made.token) };
}

const deleteRoute = (version: "v1" | "v2") =>
  route({
    method: "delete",
    path: `/${version}/organizations/{organizationName}/invites/{email}`,
    summary: `Delete an invite (${version})`,
    description: "Deletes the pending invite to this e-mail (or username). Answers `{}`.",
    tags,
    params: InviteParams,
    response: z.object({}),
    errors: { ...errors, 404: "invite not found" },
    handler: async ({ ctx, params }) => {
      await deleteInvite(ctx, params.organizationName, params.email);
      return {};
    },
  });

export const inviteRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/invites",
    summary: "List invites (v1)",
    description:
      "Pending invites of a team organization, oldest first, in Turso's v1 shape. Owners and admins.",
    tags,
    params: OrgParams,
    response: z.object({ invites: z.array(InviteV1Wire) }),
    errors,
    handler: async ({ ctx, params }) => {
      const { organization, invites } = await listInvites(ctx, params.organizationName);
      return { invites: invites.map((i) => inviteV1Wire(i, organization)) };
    },
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/invites",
    summary: "Invite by e-mail (v1)",
    description:
      "Invites an e-mail address; a pending invite to it is replaced. Shoal sends no e-mail: the invited user accepts through `/v1/user/invites`, or with the token this answer holds.",
    tags,
    params: OrgParams,
    body: V1Body,
    response: z.object({ invited: InviteV1Wire }),
    errors: { ...errors, 409: "A member already has this e-mail." },
    handler: ({ ctx, params, body }) => createV1(ctx, params.organizationName, body),
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/invite",
    summary: "Invite by e-mail (the turso CLI's form)",
    description: "What `turso org members invite` calls; the same as `POST .../invites`.",
    tags,
    params: OrgParams,
    body: V1Body,
    response: z.object({ invited: InviteV1Wire }),
    errors: { ...errors, 409: "A member already has this e-mail." },
    handler: ({ ctx, params, body }) => createV1(ctx, params.organizationName, body),
  }),
  deleteRoute("v1"),
  route({
    method: "get",
    path: "/v2/organizations/{organizationName}/invites",
    summary: "List invites",
    description: "Pending invites of a team organization, oldest first. Owners and admins.",
    tags,
    params: OrgParams,
    response: z.object({ invites: z.array(InviteV2Wire) }),
    errors,
    handler: async ({ ctx, params }) => ({
      invites: (await listInvites(ctx, params.organizationName)).invites.map(inviteV2Wire),
    }),
  }),
  route({
    method: "post",
    path: "/v2/organizations/{organizationName}/invites",
    summary: "Invite by e-mail or username",
    description:
      "Exactly one of `email` and `username`. A pending invite to the same address is replaced. The answer's `token` is shown only here.",
    tags,
    params: OrgParams,
    body: z.object({ email: optional(z.string()), username: optional(z.string()), role: optional(Role) }),
    response: z.object({ invited: InviteCreatedV2Wire }),
    errors: {
      ...errors,
      404: "could not find user <username>",
      409: "The user is already a member.",
    },
    handler: async ({ ctx, params, body }) => {
      const made = await createInvite(ctx, params.organizationName, body);
      return {
        invited: { ...inviteV2Wire(made.invite), organization: made.organization.slug, token: made.token },
      };
    },
  }),
  deleteRoute("v2"),
];
