import { z } from "@hono/zod-openapi";
import {
  createApiToken,
  listApiTokens,
  listOrganizationTokens,
  revokeApiToken,
  revokeOrganizationToken,
} from "../../domain/accounts/api-tokens.js";
import type { ApiTokenInfo } from "../../domain/accounts/views.js";
import { OrgParams, optional, orgParam, pathParam } from "../params.js";
import { type Route, route } from "../route.js";

const tags = ["API tokens"];
const NameParams = z.object({ tokenName: pathParam("tokenName", "Token name, unique per user.", "ci") });
const Validated = z.object({
  exp: z.number().openapi({ description: "Expiry in Unix seconds; -1 = never." }),
});

const MintBody = z.object({
  organization: optional(z.string()).openapi({
    description: "Limit the token to this organization (slug).",
    example: "acme",
  }),
  group: optional(z.string()).openapi({
    description: "Limit the token to this group of the organization; needs `scopes`. Owners and admins only.",
    example: "default",
  }),
  scopes: optional(z.array(z.string())).openapi({
    description:
      "What a group-scoped token may do: read, db:create, db:delete, db:configure, db:mint-token, db:rotate-creds, group:configure, group:mint-token, group:rotate-creds, or the presets read-only and full-access.",
    example: ["read-only"],
  }),
});

const TokenWire = z
  .object({
    name: z.string(),
    id: z.string().openapi({ description: "Token id (the `jti` of the token)." }),
    organization: z.string().optional(),
    group: z.string().optional(),
    scopes: z
      .array(z.string())
      .optional()
      .openapi({ description: "Always expanded: presets are not echoed." }),
    owner: z.object({ username: z.string(), email: z.string() }).optional(),
    created_at: z.string().openapi({ example: "2026-11-21" }),
  })
  .openapi("ApiToken");

function tokenWire(t: ApiTokenInfo): z.infer<typeof TokenWire> {
  return {
    name: t.name,
    id: t.id,
    ...(t.organization ? { organization: t.organization } : {}),
    ...(t.group ? { group: t.group } : {}),
    ...(t.scopes ? { scopes: t.scopes } : {}),
    ...(t.owner ? { owner: t.owner } : {}),
    created_at: t.createdAt.slice(0, 10),
  };
}

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

const mintErrors = {
  400: "Invalid name, an unknown scope, scopes without a group, or a group without scopes.",
  403: "Not a member of the organization, not an admin (group tokens), or a restricted caller token.",
  404: "group not found",
  409: "a token named <name> already exists",
} as const;

export const apiTokenRoutes: Route[] = [
  route({
    method: "post",
    path: "/v1/auth/api-tokens/{tokenName}",
    summary: "Create an API token",
    description:
      "The token value is in this answer only; Shoal keeps just its hash. With no body the token acts in every organization of the caller; `organization` limits it to one, and `group` with `scopes` to one group.",
    tags,
    params: NameParams,
    body: MintBody,
    response: z.object({ name: z.string(), id: z.string(), token: z.string() }),
    errors: mintErrors,
    handler: async ({ ctx, params, body }) => {
      const t = await createApiToken(ctx, params.tokenName, body);
      return { name: t.name, id: t.id, token: t.token };
    },
  }),
  route({
    method: "post",
    path: "/v2/auth/api-tokens/{tokenName}",
    summary: "Create an API token (turso CLI form)",
    description:
      "The same as the v1 route, answered as `{token: {name, id, value}}`, which the turso CLI reads.",
    tags,
    params: NameParams,
    body: MintBody,
    response: z.object({ token: z.object({ name: z.string(), id: z.string(), value: z.string() }) }),
    errors: mintErrors,
    handler: async ({ ctx, params, body }) => {
      const t = await createApiToken(ctx, params.tokenName, body);
      return { token: { name: t.name, id: t.id, value: t.token } };
    },
  }),
  route({
    method: "get",
    path: "/v1/auth/api-tokens",
    summary: "List the caller's API tokens",
    tags,
    response: z.object({ tokens: z.array(TokenWire) }),
    handler: async ({ ctx }) => ({ tokens: (await listApiTokens(ctx)).map(tokenWire) }),
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
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/api-tokens",
    summary: "List the organization's API tokens",
    description:
      "Tokens limited to this organization or one of its groups. Owners and admins see every member's tokens with their `owner`; members and viewers see their own. Unrestricted tokens are not listed.",
    tags,
    params: OrgParams,
    response: z.object({ tokens: z.array(TokenWire) }),
    handler: async ({ ctx, params }) => ({
      tokens: (await listOrganizationTokens(ctx, params.organizationName)).map(tokenWire),
    }),
  }),
  route({
    method: "delete",
    path: "/v1/organizations/{organizationName}/api-tokens/{tokenId}",
    summary: "Revoke an organization's API token by id",
    description:
      "Owners and admins revoke any token limited to the organization; members their own. A token of another organization, or an unrestricted one, is not found.",
    tags,
    params: z.object({
      organizationName: orgParam,
      tokenId: pathParam("tokenId", "Token id.", "clGFZ4STEe6fljpFzIum8A"),
    }),
    response: z.object({ token: z.string() }),
    errors: { 404: "token <id> not found" },
    handler: async ({ ctx, params }) => {
      await revokeOrganizationToken(ctx, params.organizationName, params.tokenId);
      return { token: params.tokenId };
    },
  }),
];
