import { z } from "@hono/zod-openapi";
import { jwksTemplate, listJwks, removeJwks, saveJwks } from "../../domain/data-access/jwks.js";
import type { TrustedKeySet } from "../../domain/data-access/provider-tokens.js";
import { apiErrors } from "../errors.js";
import { OrgParams, optional, orgParam, pathParam } from "../params.js";
import { type Route, route } from "../route.js";

/*
 * Sign-in with the application's own identity provider (Turso's `org jwks`): an organization
 * trusts a provider's JSON Web Key Set, and tokens the provider signs with Turso's claims open the
 * databases they name. The routes are the ones the turso CLI calls, under /v2.
 */

const tags = ["Organizations"];
const NameParams = z.object({
  organizationName: orgParam,
  name: pathParam("name", "The key set's name in the organization.", "clerk"),
});

const KeySetWire = z
  .object({
    jwks_name: z.string().openapi({ example: "clerk" }),
    jwks_url: z.string().openapi({ example: "https://example.clerk.accounts.dev/.well-known/jwks.json" }),
    issuer: z
      .string()
      .nullable()
      .openapi({ description: "Shoal: the `iss` every token must carry, if set." }),
    audience: z.string().nullable().openapi({ description: "Shoal: a value `aud` must hold, if set." }),
  })
  .openapi("KeySet");

function keySetWire(s: TrustedKeySet): z.infer<typeof KeySetWire> {
  return { jwks_name: s.name, jwks_url: s.url, issuer: s.issuer, audience: s.audience };
}

const SaveBody = z.object({
  jwks_url: optional(z.string()).openapi({
    description: "Where the provider publishes its keys (https or http).",
  }),
  region: optional(z.string()).openapi({
    description: "Sent by the turso CLI; ignored (one Shoal is one region).",
  }),
  issuer: optional(z.string()).openapi({
    description: "Shoal: refuse tokens whose `iss` is anything else. Recommended.",
    example: "https://example.clerk.accounts.dev",
  }),
  audience: optional(z.string()).openapi({
    description:
      "Shoal: refuse tokens whose `aud` doesn't hold this value. Needed for tokens that name no database or group, which then open every database of the organization.",
  }),
});

const TemplateInput = z.object({
  database: optional(z.string()).openapi({ description: "A database's name: the claims open it." }),
  group: optional(z.string()).openapi({ description: "A group's name: the claims open all its databases." }),
  scope: optional(z.string()).openapi({ description: "`full-access` (default) or `read-only`." }),
  permissions: optional(z.unknown()).openapi({
    description:
      'Fine-grained permissions for the template\'s `perm` claim: rules `{"t": [tables], "a": [actions]}` (no tables: every table), as for a database token\'s `fine_grained_permissions`.',
  }),
});

/** A query parameter carrying JSON; a 400 when it isn't. */
function jsonQuery(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw apiErrors.queryNotJson("permissions");
  }
}

export const jwksRoutes: Route[] = [
  route({
    method: "get",
    path: "/v2/organizations/{organizationName}/jwks",
    summary: "List trusted key sets",
    description: "The identity providers' key sets whose tokens open the organization's databases.",
    tags,
    params: OrgParams,
    response: z.object({ jwks: z.array(KeySetWire) }),
    errors: { 403: "Not a member of the organization." },
    handler: async ({ ctx, params }) => ({
      jwks: (await listJwks(ctx, params.organizationName)).map(keySetWire),
    }),
  }),
  route({
    method: "put",
    path: "/v2/organizations/{organizationName}/jwks/{name}",
    summary: "Trust a key set",
    description:
      "Trusts an identity provider's JSON Web Key Set under a name, replacing the set of that name. The URL is fetched first; one that doesn't answer 200 with public RSA, EC or OKP keys is refused. Owners and admins only.",
    tags,
    params: NameParams,
    body: SaveBody,
    response: z.object({ jwks: KeySetWire }),
    errors: {
      400: "A bad name, no URL, or a URL that doesn't serve a usable key set.",
      403: "Not an owner or admin of the organization.",
      409: "The organization already trusts 10 key sets.",
    },
    handler: async ({ ctx, params, body }) => ({
      jwks: keySetWire(
        await saveJwks(ctx, params.organizationName, params.name, {
          url: body.jwks_url,
          issuer: body.issuer,
          audience: body.audience,
        }),
      ),
    }),
  }),
  route({
    method: "delete",
    path: "/v2/organizations/{organizationName}/jwks/{name}",
    summary: "Stop trusting a key set",
    description: "Tokens the set's keys signed stop opening databases. Owners and admins only.",
    tags,
    params: NameParams,
    body: z.object({ region: optional(z.string()) }),
    response: z.object({ jwks_name: z.string() }),
    errors: { 403: "Not an owner or admin of the organization.", 404: "no key set named <name>" },
    handler: async ({ ctx, params }) => {
      await removeJwks(ctx, params.organizationName, params.name);
      return { jwks_name: params.name };
    },
  }),
  route({
    method: "get",
    path: "/v2/organizations/{organizationName}/jwks-template",
    summary: "Claims for a provider's tokens",
    description:
      "The claims an identity provider's token must carry to open a database or a group. The turso CLI sends the request as a JSON body on this GET; the same fields are read from the query string too.",
    tags,
    params: OrgParams,
    query: TemplateInput.omit({ permissions: true }).extend({
      permissions: optional(z.string()).openapi({ description: "The permissions as JSON text." }),
    }),
    body: TemplateInput,
    response: z.object({ template: z.record(z.string(), z.unknown()) }),
    errors: {
      400: "Neither or both of database and group, a scope other than full-access or read-only, or malformed permissions.",
      403: "Not a member of the organization.",
      404: "The database or group doesn't exist.",
    },
    handler: async ({ ctx, params, query, body }) => ({
      template: await jwksTemplate(ctx, params.organizationName, {
        database: body.database ?? query.database,
        group: body.group ?? query.group,
        scope: body.scope ?? query.scope,
        permissions: body.permissions ?? jsonQuery(query.permissions),
      }),
    }),
  }),
];
