import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  abandonIdempotent,
  beginIdempotent,
  completeIdempotent,
  requestFingerprint,
} from "../domain/accounts/idempotency.js";
import { parseLenientJson } from "../lib/json-body.js";
import { resolveCtx } from "./auth.js";
import { bodyText, MAX_API_BODY_BYTES, refuseDeclaredTooLarge } from "./body.js";
import type { ApiCtx, AppEnv } from "./env.js";
import { apiErrors } from "./errors.js";
import { forwardable, forwardToHolder } from "./forward.js";

export const ErrorBody = z
  .object({ error: z.string().openapi({ example: "group not found" }) })
  .openapi("Error", { description: "Every error answer: a human-readable message." });

type Method = "get" | "post" | "patch" | "delete" | "put";
type AnyObject = z.ZodType<Record<string, unknown>>;
type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 409 | 413 | 422 | 429 | 503;

interface RouteDef<
  P extends AnyObject,
  Q extends AnyObject,
  B extends z.ZodType,
  A extends boolean,
  R extends z.ZodType,
> {
  method: Method;
  /** OpenAPI-style path, `{param}` placeholders. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Defaults to true. A public route checks a token only when one is sent. */
  auth?: A;
  params?: P;
  query?: Q;
  body?: B;
  /** Schema of the 200 answer: documented, and what the handler must return (checked by the compiler). */
  response: R;
  errors?: Partial<Record<ErrorStatus, string>>;
  /**
   * A create that honours an `Idempotency-Key` header: a retry gets the first answer back. Never
   * on routes whose answer holds a secret (a token), since answers are stored for replay.
   */
  idempotent?: boolean;
  handler: (input: {
    ctx: A extends false ? ApiCtx | undefined : ApiCtx;
    params: z.infer<P>;
    query: z.infer<Q>;
    body: z.infer<B>;
    c: Context<AppEnv>;
  }) => Promise<z.output<R>> | z.output<R>;
}

/** What the OpenAPI document needs of a route. */
type RouteDoc = Pick<
  RouteDef<AnyObject, AnyObject, z.ZodType, boolean, z.ZodType>,
  "method" | "description" | "tags" | "query" | "body" | "response" | "errors" | "idempotent"
>;

export interface Route {
  method: Method;
  path: string;
  /** False for public routes, which check a token only when one is sent. */
  auth: boolean;
  /** The same route without `/organizations/{organizationName}`, on the caller's personal organization. */
  personalAlias: string | undefined;
  register(app: OpenAPIHono<AppEnv>): void;
}

const ORG_PREFIX = /^\/(v[12])\/organizations\/\{organizationName\}(\/.+)$/;

/**
 * The turso CLI drops `/organizations/{org}` from every path when the personal organization is
 * selected (`/v1/databases`, `/v2/locations`, ...): each organization route answers there too.
 */
function personalAliasOf(path: string): string | undefined {
  const m = ORG_PREFIX.exec(path);
  return m ? `/${m[1]}${m[2]}` : undefined;
}

const EMPTY = z.object({});

const IdempotencyHeader = z.object({
  "idempotency-key": z.string().optional().openapi({
    description:
      "Makes the create safe to retry: a request repeated with the same key (within 24 hours) gets the first answer back, marked `Idempotent-Replayed: true`, instead of running again.",
    example: "8e03978e-40d5-43e8-bc93-6894a57f9324",
  }),
});

/** Counts the request against its token's limit; over it, a 429 with the RateLimit and Retry-After headers. */
function enforceRateLimit(c: Context<AppEnv>, tokenId: string): void {
  const limiter = c.get("limiter");
  if (!limiter.enabled) return;
  const d = limiter.take(tokenId);
  c.header("RateLimit-Policy", `"per-token";q=${d.limit};w=${limiter.policy.windowSeconds}`);
  c.header("RateLimit", `"per-token";r=${d.remaining};t=${d.resetSeconds}`);
  if (!d.allowed) {
    c.header("Retry-After", String(d.resetSeconds));
    throw apiErrors.rateLimited(d.limit, limiter.policy.windowSeconds, d.resetSeconds);
  }
}

/** Runs a create under an Idempotency-Key: the first answer is stored, and a retry replays it. */
async function runIdempotent(
  c: Context<AppEnv>,
  ctx: ApiCtx,
  key: string,
  run: () => Promise<unknown>,
): Promise<Response> {
  const { deps, actor } = ctx;
  const fingerprint = requestFingerprint(c.req.method, c.req.path, await bodyText(c));
  const start = await beginIdempotent(deps, actor.userId, key, fingerprint);
  if (start.replay) {
    c.header("Idempotent-Replayed", "true");
    return c.body(start.body, start.status as 200, { "content-type": "application/json" });
  }
  let result: unknown;
  try {
    result = await run();
  } catch (e) {
    await abandonIdempotent(deps, actor.userId, key);
    throw e;
  }
  await completeIdempotent(deps, actor.userId, key, 200, JSON.stringify(result));
  return c.json(result as object, 200);
}

const toHono = (path: string) => path.replace(/\{([^}]+)\}/g, ":$1");

/** The params schema of a personal alias: the same, without the organization. */
function omitOrg(params: AnyObject | undefined): z.ZodType | undefined {
  if (!params || !(params instanceof z.ZodObject)) return params;
  const rest = (params as z.ZodObject<z.ZodRawShape>).omit({ organizationName: true } as never);
  return Object.keys(rest.shape).length > 0 ? rest : undefined;
}

function parse<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const at = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  throw apiErrors.invalidInput(where, at, issue?.message ?? "malformed");
}

/**
 * Declares one endpoint: its contract (zod schemas, documented in the OpenAPI registry) and its
 * handler. Before the handler runs, the token is checked and params, query and body are parsed;
 * bodies are read leniently (any content type, empty = `{}`, keys matched without case) because
 * that's what the official clients send. The handler must return the declared response's type.
 */
export function route<
  P extends AnyObject = typeof EMPTY,
  Q extends AnyObject = typeof EMPTY,
  B extends z.ZodType = typeof EMPTY,
  A extends boolean = true,
  R extends z.ZodType = z.ZodType,
>(def: RouteDef<P, Q, B, A, R>): Route {
  const authRequired = def.auth !== false;
  const alias = authRequired ? personalAliasOf(def.path) : undefined;
  return {
    method: def.method,
    path: def.path,
    auth: authRequired,
    personalAlias: alias,
    register(app) {
      const method = def.method.toUpperCase();
      documentRoute(app, def, authRequired, def.path, def.summary, def.params);
      app.on(method, toHono(def.path), handlerFor(def, authRequired, false));
      if (alias) {
        documentRoute(
          app,
          def,
          authRequired,
          alias,
          `${def.summary} (personal organization)`,
          omitOrg(def.params),
        );
        app.on(method, toHono(alias), handlerFor(def, authRequired, true));
      }
    },
  };
}

/** Registers one path of a route in the OpenAPI document, with its answers and their errors. */
function documentRoute(
  app: OpenAPIHono<AppEnv>,
  def: RouteDoc,
  authRequired: boolean,
  path: string,
  summary: string,
  params: z.ZodType | undefined,
): void {
  const responses: Record<string, { description: string; content?: Record<string, { schema: z.ZodType }> }> =
    { 200: { description: "OK", content: { "application/json": { schema: def.response } } } };
  const errors: Partial<Record<ErrorStatus, string>> = {
    ...(authRequired ? { 401: "Missing, malformed, unknown or revoked API token." } : {}),
    ...(def.body ? { 413: `A body larger than ${MAX_API_BODY_BYTES} bytes.` } : {}),
    ...def.errors,
  };
  for (const [status, description] of Object.entries(errors)) {
    responses[status] = { description, content: { "application/json": { schema: ErrorBody } } };
  }
  app.openAPIRegistry.registerPath({
    method: def.method,
    path,
    summary,
    description: def.description,
    tags: def.tags,
    security: authRequired ? [{ bearerAuth: [] }] : [],
    request: {
      ...(params ? { params: params as never } : {}),
      ...(def.query ? { query: def.query as never } : {}),
      ...(def.body
        ? { body: { required: false, content: { "application/json": { schema: def.body } } } }
        : {}),
      ...(def.idempotent ? { headers: IdempotencyHeader as never } : {}),
    },
    responses,
  });
}

/**
 * The request handler of one path of a route (`personal`: the alias without the organization):
 * token, rate limit, idempotency, then the route's own handler; a call for another node's files is
 * forwarded there.
 */
function handlerFor<
  P extends AnyObject,
  Q extends AnyObject,
  B extends z.ZodType,
  A extends boolean,
  R extends z.ZodType,
>(
  def: RouteDef<P, Q, B, A, R>,
  authRequired: boolean,
  personal: boolean,
): (c: Context<AppEnv>) => Promise<Response> {
  return async (c) => {
    // Before the token is even looked up: a body declared too large is never read.
    if (def.body) refuseDeclaredTooLarge(c);
    const ctx = await resolveCtx(c, !authRequired);
    if (ctx) enforceRateLimit(c, ctx.actor.tokenId);
    try {
      const idempotencyKey = def.idempotent && ctx ? c.req.header("idempotency-key") : undefined;
      if (idempotencyKey !== undefined && ctx) {
        return await runIdempotent(c, ctx, idempotencyKey, () => run(def, c, ctx, personal));
      }
      return c.json((await run(def, c, ctx, personal)) as object, 200);
    } catch (e) {
      // Files of another node's locations: that node serves the call (see api/forward.ts).
      const self = c.get("deps").placement.nodeId;
      if (forwardable(e, c, self)) return forwardToHolder(c, e as never, self);
      throw e;
    }
  };
}

/** Parses the request as the route declares it and runs the route's handler. */
async function run<
  P extends AnyObject,
  Q extends AnyObject,
  B extends z.ZodType,
  A extends boolean,
  R extends z.ZodType,
>(
  def: RouteDef<P, Q, B, A, R>,
  c: Context<AppEnv>,
  ctx: ApiCtx | undefined,
  personal: boolean,
): Promise<z.output<R>> {
  const raw = personal ? { ...c.req.param(), organizationName: ctx?.actor.username ?? "" } : c.req.param();
  const params = parse(def.params ?? EMPTY, raw, "path");
  const query = parse(def.query ?? EMPTY, c.req.query(), "query");
  let body: unknown = {};
  if (def.body) {
    const json = parseLenientJson(await bodyText(c));
    if (!json.ok) throw apiErrors.invalidJson(json.error);
    body = parse(def.body, json.value, "request body");
  }
  return def.handler({
    ctx: ctx as A extends false ? ApiCtx | undefined : ApiCtx,
    params: params as z.infer<P>,
    query: query as z.infer<Q>,
    body: body as z.infer<B>,
    c,
  });
}
