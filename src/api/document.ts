import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "./env.js";
import { renderReferencePage } from "./reference-page.js";

const CONFIG = (version: string) => ({
  openapi: "3.1.0",
  info: {
    title: "Shoal Platform API",
    version,
    description:
      "Management API of Shoal, wire-compatible with the Turso Platform API. Every organization route also answers without `/organizations/{organizationName}`, on the caller's personal organization, as the turso CLI calls it.",
  },
});

/**
 * `GET /openapi.json` (OpenAPI 3.1, generated from the route schemas) and `GET /reference` (the
 * same document as a readable page). Both are public: they describe the API, not its data.
 */
export function registerDocumentRoutes(app: OpenAPIHono<AppEnv>, version: string): void {
  const meta = (path: string, summary: string, type: string) =>
    app.openAPIRegistry.registerPath({
      method: "get",
      path,
      summary,
      tags: ["Reference"],
      security: [],
      responses: { 200: { description: "OK", content: { [type]: { schema: z.string() } } } },
    });
  meta("/openapi.json", "This API as an OpenAPI 3.1 document", "application/json");
  meta("/reference", "This API as a readable reference page", "text/html");

  app.doc31("/openapi.json", CONFIG(version));
  let page: string | undefined;
  app.get("/reference", (c) => {
    page ??= renderReferencePage(
      app.getOpenAPI31Document(CONFIG(version)) as unknown as Record<string, unknown>,
    );
    return c.html(page);
  });
}
