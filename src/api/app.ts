import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { routePath } from "hono/route";
import { IpAllowlist } from "../lib/ip-allowlist.js";
import { loggablePath } from "../lib/loggable-path.js";
import { RateLimiter, type RateLimitPolicy } from "../lib/rate-limiter.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../lib/request-id.js";
import { registerConsoleRoutes } from "./console.js";
import { registerDocumentRoutes } from "./document.js";
import type { ApiPorts, AppEnv } from "./env.js";
import { errorResponse } from "./error-handler.js";
import { registerMetricsRoute } from "./metrics-route.js";
import type { Route } from "./route.js";
import { adminUserRoutes } from "./routes/admin-users.js";
import { apiTokenRoutes } from "./routes/api-tokens.js";
import { auditLogRoutes } from "./routes/audit-logs.js";
import { backupRoutes } from "./routes/backups.js";
import { billingRoutes } from "./routes/billing.js";
import { databaseActionRoutes } from "./routes/database-actions.js";
import { databaseSettingsRoutes } from "./routes/database-settings.js";
import { databaseTokenRoutes } from "./routes/database-tokens.js";
import { databaseRoutes } from "./routes/databases.js";
import { dumpRoutes } from "./routes/dumps.js";
import { failoverRoutes } from "./routes/failover.js";
import { groupRoutes } from "./routes/groups.js";
import { healthRoutes } from "./routes/health.js";
import { instanceRoutes } from "./routes/instances.js";
import { inviteRoutes } from "./routes/invites.js";
import { jwksRoutes } from "./routes/jwks.js";
import { locationRoutes } from "./routes/locations.js";
import { memberRoutes } from "./routes/members.js";
import { nodeRoutes } from "./routes/nodes.js";
import { organizationRoutes } from "./routes/organizations.js";
import { planRoutes } from "./routes/plans.js";
import { releaseRoutes } from "./routes/releases.js";
import { usageHistoryRoutes } from "./routes/usage-history.js";
import { userRoutes } from "./routes/users.js";
import { v3Routes } from "./routes/v3.js";
import { v3RecoveryRoutes } from "./routes/v3-recovery.js";

/** Every route of the management API, in registration order. */
export const ALL_ROUTES: readonly Route[] = [
  ...healthRoutes,
  ...locationRoutes,
  ...apiTokenRoutes,
  ...organizationRoutes,
  ...memberRoutes,
  ...inviteRoutes,
  ...userRoutes,
  ...releaseRoutes,
  ...groupRoutes,
  ...databaseRoutes,
  ...v3Routes,
  ...v3RecoveryRoutes,
  ...jwksRoutes,
  ...dumpRoutes,
  ...databaseTokenRoutes,
  ...databaseSettingsRoutes,
  ...usageHistoryRoutes,
  ...databaseActionRoutes,
  ...instanceRoutes,
  ...adminUserRoutes,
  ...nodeRoutes,
  ...backupRoutes,
  ...failoverRoutes,
  ...auditLogRoutes,
  ...planRoutes,
  ...billingRoutes,
];

export interface AppOptions {
  /** Requests each API token may make per window; off unless the operator sets it. */
  rateLimit?: RateLimitPolicy;
  /** The built web console (index.html and assets/); without it `/console` says how to build it. */
  consoleDir?: string;
  /** A bearer token that may read `GET /metrics` besides the administrator's (`SHOAL_METRICS_TOKEN`). */
  metricsToken?: string;
  /** Reverse proxies whose `X-Forwarded-Proto` and `-Host` name the URL clients use (`SHOAL_TRUSTED_PROXIES`). */
  trustedProxies?: readonly string[];
}

/**
 * The route a request matched, as registered (`/v1/organizations/:organizationName/databases`):
 * metrics are labelled by it, never by the path, which names organizations and databases.
 */
function routeTemplate(c: Context<AppEnv>): string {
  const matched = routePath(c, -1);
  return matched === "*" || matched === "/*" ? "unmatched" : matched;
}

/** The management API as a Hono app: routes, the error mapper, request ids and access logs. */
export function createApp(deps: ApiPorts, opts: AppOptions = {}): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  const limiter = new RateLimiter(opts.rateLimit ?? { limit: 0, windowSeconds: 60 });
  const proxies = opts.trustedProxies?.length ? new IpAllowlist(opts.trustedProxies) : undefined;

  app.use("*", async (c, next) => {
    const requestId = requestIdOf(c.req.header(REQUEST_ID_HEADER));
    // Every line logged while serving the request, in the domain too, carries its id.
    const log = deps.log.child({ requestId });
    c.set("deps", { ...deps, log });
    c.set("requestId", requestId);
    c.set("limiter", limiter);
    if (proxies) c.set("proxies", proxies);
    const started = performance.now();
    await next();
    c.header(REQUEST_ID_HEADER, requestId);
    const seconds = (performance.now() - started) / 1000;
    deps.metrics.apiRequest(c.req.method, routeTemplate(c), c.res.status, seconds);
    const ms = Math.round(seconds * 10_000) / 10;
    log.info({ method: c.req.method, path: loggablePath(c.req.path), status: c.res.status, ms }, "request");
  });

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API token: `Authorization: Bearer <token>`.",
  });
  for (const r of ALL_ROUTES) r.register(app);

  registerDocumentRoutes(app, deps.version);
  registerMetricsRoute(app, opts.metricsToken);
  registerConsoleRoutes(app, opts.consoleDir);

  app.notFound((c) => c.json({ error: "not found" }, 404));
  app.onError((err, c) => errorResponse(err, c));
  return app;
}
