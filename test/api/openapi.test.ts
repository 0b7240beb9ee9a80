import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let doc: { openapi: string; paths: Record<string, Record<string, unknown>> };

beforeAll(async () => {
  h = await startTestShoal();
  doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as typeof doc;
});
afterAll(() => h.close());

/** Every method and path the HTTP router answers, in OpenAPI's `{param}` form. */
function servedRoutes(): string[] {
  const app = createApp(h.shoal.deps);
  const out = new Set<string>();
  for (const r of app.routes) {
    if (r.method === "ALL") continue;
    out.add(`${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`);
  }
  return [...out].sort();
}

function documentedRoutes(): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item)) out.push(`${method} ${path}`);
  }
  return out.sort();
}

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("lists exactly the routes the server answers, personal-organization aliases included", () => {
    expect(documentedRoutes()).toEqual(servedRoutes());
    expect(doc.paths["/v1/databases"]?.post).toBeDefined();
  });

  it("marks which routes need a token", () => {
    const health = doc.paths["/health"]?.get as { security?: unknown[] };
    const list = doc.paths["/v1/organizations/{organizationName}/databases"]?.get as { security?: unknown[] };
    expect(health.security).toEqual([]);
    expect(list.security).toEqual([{ bearerAuth: [] }]);
  });
});

describe("the API reference page", () => {
  it("is served by Shoal itself, documenting every route, with nothing fetched from elsewhere", async () => {
    const r = await fetch(`${h.url}/reference`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    const html = await r.text();
    for (const route of documentedRoutes()) {
      const [method, path] = route.split(" ") as [string, string];
      expect(html).toContain(`${method.toUpperCase()} ${path}`);
    }
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain("Create a database");
  });
});
