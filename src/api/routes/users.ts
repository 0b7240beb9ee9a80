import { z } from "@hono/zod-openapi";
import { getCurrentUser, invalidateSessions } from "../../domain/accounts/current-user.js";
import {
  acceptInvite,
  declineInvite,
  listReceivedInvites,
  type ReceivedInvite,
} from "../../domain/accounts/invites.js";
import type { ApiCtx } from "../env.js";
import { optional } from "../params.js";
import { type Route, route } from "../route.js";
import { MemberWire, memberWire, OrganizationWire, organizationWire } from "../wire/organization.js";

const tags = ["User"];

const UserWire = z
  .object({
    username: z.string().openapi({ example: "bob" }),
    name: z.string().openapi({ description: "Shoal keeps no display name: the username.", example: "bob" }),
    email: z.string().openapi({ example: "bob@example.com" }),
    avatarUrl: z.string().openapi({ description: "Always empty.", example: "" }),
    plan: z.string().openapi({ description: "Plan of the personal organization.", example: "self-hosted" }),
    mfa: z.boolean().openapi({ description: "Always false: Shoal has no multi-factor sign-in." }),
    has_pending_invites: z.boolean().openapi({ description: "Whether `GET /v1/user/invites` lists any." }),
    admin: z.boolean().openapi({ description: "Whether the user administers this Shoal instance." }),
  })
  .openapi("CurrentUser");

async function currentUser(ctx: ApiCtx) {
  const u = await getCurrentUser(ctx);
  return {
    user: {
      username: u.username,
      name: u.username,
      email: u.email,
      avatarUrl: "",
      plan: u.plan,
      mfa: false,
      has_pending_invites: u.pendingInvites > 0,
      admin: u.isAdmin,
    },
  };
}

const ReceivedInviteWire = z
  .object({
    id: z.number().int().openapi({ example: 7 }),
    organization: z.string().openapi({ description: "Slug of the inviting organization.", example: "acme" }),
    organization_name: z.string().openapi({ example: "Acme" }),
    role: z.string().openapi({ example: "member" }),
    email: z.string().openapi({ description: "Empty when addressed to the username." }),
    username: z.string().openapi({ description: "Empty when addressed to the e-mail." }),
    inviter: z.string().openapi({ example: "alice" }),
    created_at: z.string(),
  })
  .openapi("ReceivedInvite");

const receivedWire = (i: ReceivedInvite): z.infer<typeof ReceivedInviteWire> => ({
  id: i.id,
  organization: i.organization.slug,
  organization_name: i.organization.name,
  role: i.role,
  email: i.email ?? "",
  username: i.username ?? "",
  inviter: i.inviter,
  created_at: i.createdAt,
});

const InviteIdParams = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    // Invite ids are 32-bit in the store: a larger one names no invite.
    .max(2_147_483_647)
    .openapi({ param: { name: "id", in: "path" }, description: "Invite id.", example: 7 }),
});

export const userRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/user",
    summary: "Retrieve the current user",
    tags,
    response: z.object({ user: UserWire }),
    handler: ({ ctx }) => currentUser(ctx),
  }),
  route({
    method: "get",
    path: "/v1/current-user",
    summary: "Retrieve the current user (the turso CLI's form)",
    description: "What `turso auth whoami` and the login check read; the same answer as `GET /v1/user`.",
    tags,
    response: z.object({ user: UserWire }),
    handler: ({ ctx }) => currentUser(ctx),
  }),
  route({
    method: "post",
    path: "/v1/auth/invalidate",
    summary: "Invalidate this session (auth logout --all)",
    description:
      "Shoal has no login sessions: the API token a client signs in with is its session. This revokes the token making the call (everywhere it is used) and answers when that took effect. The caller's other API tokens stay valid, as Turso's do; revoke them by name. The last API token of the instance's administrators can't be invalidated.",
    tags,
    response: z.object({
      validFrom: z.number().int().openapi({ description: "Unix seconds.", example: 1767225600 }),
    }),
    errors: { 409: "This is the last API token of any instance administrator." },
    handler: async ({ ctx }) => ({ validFrom: await invalidateSessions(ctx) }),
  }),
  route({
    method: "get",
    path: "/v1/user/invites",
    summary: "List invites to me",
    description: "Pending invites addressed to the caller's username or e-mail, oldest first.",
    tags,
    response: z.object({ invites: z.array(ReceivedInviteWire) }),
    handler: async ({ ctx }) => ({ invites: (await listReceivedInvites(ctx)).map(receivedWire) }),
  }),
  route({
    method: "post",
    path: "/v1/user/invites/{id}/accept",
    summary: "Accept an invite",
    description:
      "The caller becomes a member with the invite's role. An invite addressed to the caller needs no token; an e-mail invite can also be accepted from another account with the `token` its creator received. Needs an API token that isn't limited to an organization.",
    tags,
    params: InviteIdParams,
    body: z.object({ token: optional(z.string()).openapi({ description: "The invite's token." }) }),
    response: z.object({ organization: OrganizationWire, member: MemberWire }),
    errors: {
      400: "Malformed id.",
      403: "The API token is limited to an organization.",
      404: "invite not found",
      409: "The caller is already a member.",
    },
    handler: async ({ ctx, params, body }) => {
      const { organization, member } = await acceptInvite(ctx, params.id, body.token);
      return { organization: organizationWire(organization), member: memberWire(member) };
    },
  }),
  route({
    method: "post",
    path: "/v1/user/invites/{id}/decline",
    summary: "Decline an invite",
    description: "Deletes an invite addressed to the caller. Answers `{}`.",
    tags,
    params: InviteIdParams,
    response: z.object({}),
    errors: { 400: "Malformed id.", 404: "invite not found" },
    handler: async ({ ctx, params }) => {
      await declineInvite(ctx, params.id);
      return {};
    },
  }),
];
