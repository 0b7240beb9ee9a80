import { createHash, timingSafeEqual } from "node:crypto";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { authenticate } from "../domain/accounts/api-token-auth.js";
import { requireInstanceAdmin } from "../domain/core/roles.js";
import { bearerToken } from "./auth.js";
import type { AppEnv } from "./env.js";
import { apiErrors } from "./errors.js";

/**
 * Compares in constant time whatever the lengths: both sides are hashed first, so neither the
 * contents nor the length of the scrape token leak through the time a wrong guess takes.
 */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * A scrape is allowed with the scrape token (`SHOAL_METRICS_TOKEN`, meant for a Prometheus
 * server's configuration) or with an instance administrator's API token.
 */
async function authorizeScrape(c: Context<AppEnv>, scrapeToken: string | undefined): Promise<void> {
  const header = c.req.header("authorization");
  if (header === undefined) throw apiErrors.missingToken();
  const token = bearerToken(header);
  if (!token) throw apiErrors.malformedAuthorization();
  if (scrapeToken !== undefined && sameSecret(token, scrapeToken)) return;
  const actor = await authenticate(c.get("deps"), token);
  requireInstanceAdmin(actor, "read metrics");
}

/** `GET /metrics`: this process's metrics in the Prometheus text format (docs/operations/metrics.md). */
export function registerMetricsRoute(app: OpenAPIHono<AppEnv>, scrapeToken: string | undefined): void {
  app.openAPIRegistry.registerPath({
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics of this process",
    description:
      "Requests, statements, rows, latencies, connections, replication lag and backup delay in the Prometheus text format (see docs/operations/metrics.md). Answers the instance administrator's API token, and the scrape token set with `SHOAL_METRICS_TOKEN`.",
    tags: ["Service"],
    security: [{ bearerAuth: [] }],
    responses: {
      200: { description: "The metrics.", content: { "text/plain": { schema: z.string() } } },
      401: { description: "No token, or one that is neither an API token nor the scrape token." },
      403: { description: "An API token of a user who is not the instance administrator." },
    },
  });
  app.get("/metrics", async (c) => {
    await authorizeScrape(c, scrapeToken);
    const { contentType, body } = await c.get("deps").metrics.scrape();
    return c.body(body, 200, { "content-type": contentType, "cache-control": "no-store" });
  });
}
