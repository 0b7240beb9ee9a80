import { z } from "@hono/zod-openapi";
import { revokeDatabaseToken, revokeGroupToken } from "../../domain/data-access/db-token-revocation.js";
import {
  mintDatabaseToken,
  mintGroupToken,
  rotateDatabaseTokens,
  rotateGroupTokens,
  type TokenRequest,
} from "../../domain/data-access/db-tokens.js";
import { parseTablePermissions } from "../../domain/data-access/table-permissions.js";
import { DATABASE_NOT_FOUND } from "../documented-errors.js";
import { DatabaseParams, GroupParams, optional } from "../params.js";
import { type Route, route } from "../route.js";

const RevokeBody = z.object({
  token: optional(z.string()).openapi({ description: "The token to revoke." }),
});
const RevokeAnswer = z.object({
  revoked: z.string().openapi({ description: "The revoked token's id (jti)." }),
});

export const TokenQuery = z.object({
  expiration: optional(z.string()).openapi({
    description:
      "`never` (default), or a duration such as `2w`, `1d`, `12h`, `30m` (units w, d, h, m, s, ms, us, ns).",
    example: "2w",
  }),
  authorization: optional(z.string()).openapi({ description: "`full-access` (default) or `read-only`." }),
});
export const TokenBody = z.object({
  permissions: optional(
    z.object({
      read_attach: optional(
        z.object({ databases: optional(z.array(z.string())) }).openapi({
          description: "Databases of the organization the token may read through ATTACH.",
        }),
      ),
    }),
  ),
  fine_grained_permissions: optional(z.unknown()).openapi({
    description:
      'Table-level limits (Turso\'s fine-grained permissions): rules `{"t": [tables], "a": [actions]}`, no tables meaning every table; actions `data_read`, `data_add`, `data_update`, `data_delete`, `schema_add`, `schema_update`, `schema_delete`. Every statement the token runs is checked against them.',
    example: [
      { t: null, a: ["data_read"] },
      { t: ["comments"], a: ["data_add"] },
    ],
  }),
});
export const Jwt = z.object({ jwt: z.string().openapi({ description: "An EdDSA JWT for the data plane." }) });
export const tokenErrors = {
  400: "Invalid expiration format, an invalid authorization, or malformed fine_grained_permissions",
  404: "Not found.",
};

export function tokenRequest(
  query: z.infer<typeof TokenQuery>,
  body: z.infer<typeof TokenBody>,
): TokenRequest {
  return {
    expiration: query.expiration,
    authorization: query.authorization,
    attach: body.permissions?.read_attach?.databases ?? [],
    tables: parseTablePermissions(body.fine_grained_permissions, "fine_grained_permissions"),
  };
}

export const databaseTokenRoutes: Route[] = [
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/auth/tokens",
    summary: "Create a database token",
    description: "A token for this database's data plane (SQL over HTTP and WebSocket, sync).",
    tags: ["Databases"],
    params: DatabaseParams,
    query: TokenQuery,
    body: TokenBody,
    response: Jwt,
    errors: tokenErrors,
    handler: async ({ ctx, params, query, body }) => ({
      jwt: await mintDatabaseToken(
        ctx,
        params.organizationName,
        params.databaseName,
        tokenRequest(query, body),
      ),
    }),
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/groups/{groupName}/auth/tokens",
    summary: "Create a group token",
    description: "A token that opens every database of the group, including databases created later.",
    tags: ["Groups"],
    params: GroupParams,
    query: TokenQuery,
    body: TokenBody,
    response: Jwt,
    errors: tokenErrors,
    handler: async ({ ctx, params, query, body }) => ({
      jwt: await mintGroupToken(ctx, params.organizationName, params.groupName, tokenRequest(query, body)),
    }),
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/auth/rotate",
    summary: "Rotate a database's tokens",
    description:
      "Every database token minted for this database so far stops working; other databases' tokens and group tokens are unaffected.",
    tags: ["Databases"],
    params: DatabaseParams,
    response: z.object({}),
    errors: DATABASE_NOT_FOUND,
    handler: async ({ ctx, params }) => {
      await rotateDatabaseTokens(ctx, params.organizationName, params.databaseName);
      return {};
    },
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/groups/{groupName}/auth/rotate",
    summary: "Rotate a group's tokens",
    description: "Every group token of the group, and every database token of its databases, stops working.",
    tags: ["Groups"],
    params: GroupParams,
    response: z.object({}),
    errors: { 404: "group not found" },
    handler: async ({ ctx, params }) => {
      await rotateGroupTokens(ctx, params.organizationName, params.groupName);
      return {};
    },
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/databases/{databaseName}/auth/tokens/revoke",
    summary: "Revoke one database token (Shoal)",
    description:
      "The token sent stops working from the next request; the database's other tokens go on working. Revoking a token twice is not an error. Needs the rights of a rotation.",
    tags: ["Databases"],
    params: DatabaseParams,
    body: RevokeBody,
    response: RevokeAnswer,
    errors: {
      400: "No token, a token not issued by this Shoal, or a token of another database.",
      ...DATABASE_NOT_FOUND,
    },
    handler: async ({ ctx, params, body }) => ({
      revoked: await revokeDatabaseToken(ctx, params.organizationName, params.databaseName, body),
    }),
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/groups/{groupName}/auth/tokens/revoke",
    summary: "Revoke one group token (Shoal)",
    description: "The group token sent stops working on every database of the group from the next request.",
    tags: ["Groups"],
    params: GroupParams,
    body: RevokeBody,
    response: RevokeAnswer,
    errors: {
      400: "No token, a token not issued by this Shoal, or a token of another group.",
      404: "group not found",
    },
    handler: async ({ ctx, params, body }) => ({
      revoked: await revokeGroupToken(ctx, params.organizationName, params.groupName, body),
    }),
  }),
];
