import { z } from "@hono/zod-openapi";
import {
  addMember,
  getMember,
  listMembers,
  removeMember,
  updateMemberRole,
} from "../../domain/accounts/members.js";
import { apiErrors } from "../errors.js";
import { OrgParams, optional, orgParam, PageQuery, PaginationWire, pathParam } from "../params.js";
import { type Route, route } from "../route.js";
import { MemberWire, memberWire } from "../wire/organization.js";

const tags = ["Members"];
const MemberParams = z.object({
  organizationName: orgParam,
  username: pathParam("username", "Username.", "bob"),
});
const Role = z.string().openapi({ description: "admin, member (default) or viewer", example: "member" });
const Added = z.object({
  member: z.string().openapi({ example: "bob" }),
  role: z.string().openapi({ example: "member" }),
});
const addErrors = {
  400: "invalid role, or a personal organization",
  403: "Only owners and admins add members.",
  404: "could not find user <username>",
  409: "user <username> is already a member of organization <org>",
};

export const memberRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/members",
    summary: "List members",
    description:
      "Members by username. With `limit`, one page at a time: pass `pagination.next` as `cursor` until it is null.",
    tags,
    params: OrgParams,
    query: PageQuery,
    response: z.object({ members: z.array(MemberWire), pagination: PaginationWire }),
    handler: async ({ ctx, params, query }) => {
      const page = await listMembers(ctx, params.organizationName, query);
      return { members: page.items.map(memberWire), pagination: { next: page.next } };
    },
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/members/{username}",
    summary: "Retrieve a member",
    tags,
    params: MemberParams,
    response: z.object({ member: MemberWire }),
    errors: { 404: "could not find member" },
    handler: async ({ ctx, params }) => ({
      member: memberWire(await getMember(ctx, params.organizationName, params.username)),
    }),
  }),
  route({
    method: "patch",
    path: "/v1/organizations/{organizationName}/members/{username}",
    summary: "Change a member's role",
    description:
      "Owners and admins change roles; only an owner makes someone an owner or changes an owner's role, and the last owner can't be demoted.",
    tags,
    params: MemberParams,
    body: z.object({
      role: optional(z.string()).openapi({ description: "owner, admin, member or viewer", example: "admin" }),
    }),
    response: z.object({ member: MemberWire }),
    errors: {
      400: "invalid role, or the last owner would be demoted",
      403: "updating member roles is only allowed for admin or owner",
      404: "could not find user <username>",
    },
    handler: async ({ ctx, params, body }) => ({
      member: memberWire(
        await updateMemberRole(ctx, params.organizationName, params.username, { role: body.role ?? "" }),
      ),
    }),
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/members",
    summary: "Add a member",
    description:
      "Adds an existing user to a team organization. `member` is accepted as a synonym of `username`.",
    tags,
    params: OrgParams,
    body: z.object({ username: optional(z.string()), member: optional(z.string()), role: optional(Role) }),
    response: Added,
    errors: addErrors,
    handler: async ({ ctx, params, body }) => {
      const username = body.username ?? body.member;
      if (!username) throw apiErrors.usernameRequired();
      const m = await addMember(ctx, params.organizationName, { username, role: body.role });
      return { member: m.username, role: m.role };
    },
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/members/{username}",
    summary: "Add a member (username in the path)",
    description:
      "The form `@tursodatabase/api` uses: the username in the path, `{member, role}` in the body.",
    tags,
    params: MemberParams,
    body: z.object({ role: optional(Role) }),
    response: Added,
    errors: addErrors,
    handler: async ({ ctx, params, body }) => {
      const m = await addMember(ctx, params.organizationName, { username: params.username, role: body.role });
      return { member: m.username, role: m.role };
    },
  }),
  route({
    method: "delete",
    path: "/v1/organizations/{organizationName}/members/{username}",
    summary: "Remove a member",
    description:
      "Owners and admins remove members; any member may remove themself. The last owner stays. The member's API tokens restricted to this organization are revoked.",
    tags,
    params: MemberParams,
    response: z.object({ member: z.string() }),
    errors: { 400: "The only owner can't be removed.", 404: "user <username> is not a member of org <org>" },
    handler: async ({ ctx, params }) => {
      await removeMember(ctx, params.organizationName, params.username);
      return { member: params.username };
    },
  }),
];
