import { readFileSync } from "node:fs";
import path from "node:path";
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "./env.js";

/**
 * The web console's page allows nothing it doesn't need: scripts and styles from this origin only
 * (the build inlines nothing, so no 'unsafe-inline' and no 'unsafe-eval'), requests to this origin
 * only (the console is a client of the public API and data plane like any other), no framing.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};
/** Built asset names: `<name>-<content hash>.<ext>` (see scripts/build-console.mjs). */
const ASSET = /^[A-Za-z0-9_-]+\.(js|css)$/;

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shoal console</title></head>
<body><h1>The console is not built</h1><p>Run <code>npm run build</code> (or <code>npm start</code>, which builds first) and reload.
The API reference is at <a href="/reference">/reference</a>.</p></body></html>`;

function securityHeaders(c: Context<AppEnv>): void {
  c.header("content-security-policy", CONSOLE_CSP);
  c.header("x-content-type-options", "nosniff");
  c.header("referrer-policy", "no-referrer");
  c.header("x-frame-options", "DENY");
  c.header("cross-origin-opener-policy", "same-origin");
}

/**
 * `GET /console` (the page), `GET /console/assets/<file>` and `GET /` (a redirect to the console),
 * served from the folder the build wrote. The page is never cached, so a new build shows at the
 * next load; assets are named by their content hash and cached for a year.
 */
export function registerConsoleRoutes(app: OpenAPIHono<AppEnv>, dir: string | undefined): void {
  const doc = (path: string, summary: string, responses: Record<number, string>) =>
    app.openAPIRegistry.registerPath({
      method: "get",
      path,
      summary,
      tags: ["Console"],
      security: [],
      responses: Object.fromEntries(
        Object.entries(responses).map(([status, description]) => [
          status,
          status === "302"
            ? { description }
            : { description, content: { "text/html": { schema: z.string() } } },
        ]),
      ),
    });
  doc("/", "Redirect to the web console", { 302: "To `/console`." });
  for (const path of ["/console", "/console/"]) {
    doc(path, "The web console (see docs/console.md)", {
      200: "The console's page, `Cache-Control: no-cache`, under a strict Content-Security-Policy.",
      503: "The console is not built: run `npm run build`.",
    });
  }
  app.openAPIRegistry.registerPath({
    method: "get",
    path: "/console/assets/{file}",
    summary: "A script or style sheet of the web console",
    tags: ["Console"],
    security: [],
    request: { params: z.object({ file: z.string().openapi({ example: "main-O22DV55Z.js" }) }) },
    responses: {
      200: { description: "Named by its content hash, so cached for a year (`immutable`)." },
      404: { description: "No such asset." },
    },
  });

  const files = new Map<string, Buffer | null>();
  const read = (name: string): Buffer | null => {
    if (!dir) return null;
    let body = files.get(name);
    if (body === undefined) {
      try {
        body = readFileSync(path.join(dir, name));
      } catch {
        body = null;
      }
      // A missing page is looked for again on the next request (the build may finish meanwhile).
      if (body || name !== "index.html") files.set(name, body);
    }
    return body;
  };

  app.get("/", (c) => c.redirect("/console", 302));
  const page = (c: Context<AppEnv>) => {
    securityHeaders(c);
    c.header("cache-control", "no-cache");
    const body = read("index.html");
    if (!body) return c.html(NOT_BUILT, 503);
    return c.body(new Uint8Array(body), 200, { "content-type": "text/html; charset=utf-8" });
  };
  app.get("/console", page);
  app.get("/console/", page);
  app.get("/console/assets/:file", (c) => {
    const name = c.req.param("file");
    const body = ASSET.test(name) ? read(path.join("assets", name)) : null;
    securityHeaders(c);
    if (!body) return c.json({ error: "not found" }, 404);
    c.header("cache-control", "public, max-age=31536000, immutable");
    return c.body(new Uint8Array(body), 200, { "content-type": TYPES[path.extname(name)] ?? "" });
  });
}
