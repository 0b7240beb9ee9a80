import { z } from "@hono/zod-openapi";
import { createUser, deleteUser, listUsers } from "../../domain/accounts/users.js";
import type { User } from "../../domain/accounts/views.js";
import { optional, PageQuery, PaginationWire, pathParam } from "../params.js";
import { type Route, route } from "../route.js";

const tags = ["Instance administration"];
const UserWire = z
  .object({ username: z.string(), email: z.string(), admin: z.boolean(), created_at: z.string() })
  .openapi("User");
const userWire = (u: User) => ({
  username: u.username,
  email: u.email,
  admin: u.isAdmin,
  created_at: u.createdAt,
});
const forbidden = { 403: "Only the instance administrator manages users." };

export const adminUserRoutes: Route[] = [
  route({
    method: "post",
    path: "/v1/admin/users",
    summary: "Create a user",
    description:
      "Instance administrators only (Turso has no equivalent). Creates the user with a personal organization and returns a first API token for them, shown only here.",
    tags,
    body: z.object({
      username: z.string().openapi({ example: "bob" }),
      email: z.string().openapi({ example: "bob@example.com" }),
      admin: optional(z.boolean()).openapi({ description: "Make the user an instance administrator too." }),
    }),
    response: z.object({ user: UserWire, token: z.string() }),
    errors: { 400: "Invalid username or email.", ...forbidden, 409: "username <name> is not available" },
    handler: async ({ ctx, body }) => {
      const { user, token } = await createUser(ctx, body);
      return { user: userWire(user), token: token.token };
    },
  }),
  route({
    method: "get",
    path: "/v1/admin/users",
    summary: "List users",
    description:
      "Every user by username. With `limit`, one page at a time: pass `pagination.next` as `cursor` until it is null.",
    tags,
    query: PageQuery,
    response: z.object({ users: z.array(UserWire), pagination: PaginationWire }),
    errors: forbidden,
    handler: async ({ ctx, query }) => {
      const page = await listUsers(ctx, query);
      return { users: page.items.map(userWire), pagination: { next: page.next } };
    },
  }),
  route({
    method: "delete",
    path: "/v1/admin/users/{username}",
    summary: "Delete a user",
    description:
      "Removes the user, their tokens and memberships, and their personal organization with its databases. Refused while the user is the only owner of a team organization.",
    tags,
    params: z.object({ username: pathParam("username", "Username.", "bob") }),
    response: z.object({ user: z.string() }),
    errors: {
      ...forbidden,
      404: "could not find user <username>",
      409: "The user is the only owner of a team organization.",
    },
    handler: async ({ ctx, params }) => {
      await deleteUser(ctx, params.username);
      return { user: params.username };
    },
  }),
];
