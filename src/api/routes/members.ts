import { z } from "@hono/zod-openapi";
import { addMember, listMembers, removeMember } from "../../domain/members.js";
import { InvalidError } from "../../errors.js";
import { OrgParams, optional, orgParam, pathParam } from "../params.js";
import { type Route, route } from "../route.js";
import { MemberWire, memberWire } from "../wire/organization.js";

const tags = ["Members"];
const MemberParams = z.object({
  organizationName: orgParam,
  username: pathParam("username", "Username.", "bob"),
});
const Role = z.string().openapi({ description: "admin, member (default) or viewer", example: "member" });
const Added = z.object({ member: z.string(), role: z.string() });
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
    tags,
    params: OrgParams,
    response: z.object({ members: z.array(MemberWire) }),
    handler: async ({ ctx, params }) => ({
      members: (await listMembers(ctx, params.organizationName)).map(memberWire),
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
      if (!username) throw new InvalidError("username is required");
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
    description: "Owners and admins remove members; any member may remove themself. The last owner stays.",
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
