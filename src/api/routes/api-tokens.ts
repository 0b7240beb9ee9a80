import { z } from "@hono/zod-openapi";
import { createApiToken, listApiTokens, revokeApiToken } from "../../domain/api-tokens.js";
import { pathParam } from "../params.js";
import { type Route, route } from "../route.js";

const tags = ["API tokens"];
const NameParams = z.object({ tokenName: pathParam("tokenName", "Token name, unique per user.", "ci") });
const Validated = z.object({
  exp: z.number().openapi({ description: "Expiry in Unix seconds; -1 = never." }),
});

const validate = (path: string, summary: string) =>
  route({
    method: "get",
    path,
    summary,
    description: "Checks the caller's own token. Shoal's API tokens don't expire, so `exp` is -1.",
    tags,
    response: Validated,
    handler: () => ({ exp: -1 }),
  });

export const apiTokenRoutes: Route[] = [
  route({
    method: "post",
    path: "/v1/auth/api-tokens/{tokenName}",
    summary: "Create an API token",
    description: "The token value is in this answer only; Shoal keeps just its hash.",
    tags,
    params: NameParams,
    response: z.object({ name: z.string(), id: z.string(), token: z.string() }),
    errors: { 400: "Invalid name.", 409: "a token named <name> already exists" },
    handler: async ({ ctx, params }) => {
      const t = await createApiToken(ctx, params.tokenName);
      return { name: t.name, id: t.id, token: t.token };
    },
  }),
  route({
    method: "get",
    path: "/v1/auth/api-tokens",
    summary: "List the caller's API tokens",
    tags,
    response: z.object({ tokens: z.array(z.object({ name: z.string(), id: z.string() })) }),
    handler: async ({ ctx }) => ({
      tokens: (await listApiTokens(ctx)).map((t) => ({ name: t.name, id: t.id })),
    }),
  }),
  route({
    method: "delete",
    path: "/v1/auth/api-tokens/{tokenName}",
    summary: "Revoke an API token",
    description: "The next request made with the token is refused.",
    tags,
    params: NameParams,
    response: z.object({ token: z.string() }),
    errors: { 404: "token <name> not found" },
    handler: async ({ ctx, params }) => {
      await revokeApiToken(ctx, params.tokenName);
      return { token: params.tokenName };
    },
  }),
  validate("/v1/auth/validate", "Validate the caller's token"),
  // The official TS client calls this path (Turso answers 404 there); it means the same thing.
  validate("/v1/auth/api-tokens/validate", "Validate the caller's token (path used by @tursodatabase/api)"),
];
