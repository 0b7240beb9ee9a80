import { describe, expect, it } from "vitest";
import { routeRequest } from "../../src/dataplane/routing.js";

const DOMAIN = "db.example.com";
const ID = "0b6a3c1e-8f2d-4a5b-9c7e-1d2f3a4b5c6d";

describe("which database a request names", () => {
  it.each([
    ["/db/acme/orders/v2/pipeline", { orgSlug: "acme", name: "orders" }, "/v2/pipeline", undefined],
    ["/db/acme/orders/", { orgSlug: "acme", name: "orders" }, "/", undefined],
    ["/db/acme/orders", { orgSlug: "acme", name: "orders" }, "/", undefined],
    ["/db/acme/orders/v2/pipeline?x=1", { orgSlug: "acme", name: "orders" }, "/v2/pipeline", undefined],
    [
      "/db/acme/orders@aws-eu-west-1/v3/cursor",
      { orgSlug: "acme", name: "orders" },
      "/v3/cursor",
      "aws-eu-west-1",
    ],
    ["/db/acme/orders@/v2", { orgSlug: "acme", name: "orders" }, "/v2", undefined],
    ["/db/acme/a@b@c/v2", { orgSlug: "acme", name: "a" }, "/v2", "b"],
    ["/db/my%20org/my%2Ddb/v2", { orgSlug: "my org", name: "my-db" }, "/v2", undefined],
    ["/db/acme/bad%zz/v2", { orgSlug: "acme", name: "bad%zz" }, "/v2", undefined],
    [
      "http://shoal.local:8080/db/acme/orders/v2/pipeline",
      { orgSlug: "acme", name: "orders" },
      "/v2/pipeline",
      undefined,
    ],
    [`/replication/${ID}/sync/1/2/3`, { id: ID }, "/sync/1/2/3", undefined],
    [`/replication/${ID}`, { id: ID }, "/", undefined],
  ])("by path: %s", (url, locator, path, location) => {
    const route = routeRequest("127.0.0.1:8080", url, DOMAIN);
    expect(route).toEqual({ locator, viaHost: false, path, ...(location ? { location } : {}) });
  });

  it.each([
    "/",
    "/v1/organizations/acme",
    "/db",
    "/db/",
    "/db/acme",
    "/db/acme/",
    "/db//orders/v2",
    "/replication/not-an-id/x",
  ])("names none (the management API): %s", (url) => {
    expect(routeRequest("127.0.0.1:8080", url, DOMAIN)).toBeUndefined();
  });

  it("by hostname, any case and port, a location's instance too", () => {
    expect(routeRequest("orders-acme.db.example.com", "/v2/pipeline", DOMAIN)).toEqual({
      locator: { label: "orders-acme" },
      viaHost: true,
      path: "/v2/pipeline",
    });
    expect(routeRequest("Orders-Acme.DB.example.com:443", "/", DOMAIN)).toEqual({
      locator: { label: "orders-acme" },
      viaHost: true,
      path: "/",
    });
    expect(routeRequest("orders-acme.aws-eu-west-1.db.example.com", "/v2", DOMAIN)).toEqual({
      locator: { label: "orders-acme" },
      viaHost: true,
      path: "/v2",
      location: "aws-eu-west-1",
    });
    // A hostname under the domain wins over a path that names another database.
    expect(routeRequest("orders-acme.db.example.com", "/db/other/thing/v2", DOMAIN)?.locator).toEqual({
      label: "orders-acme",
    });
  });

  it("reads the same Host again as the domain asked about, not as the last one it saw", () => {
    // The last Host seen is remembered: asking with another domain must not reuse that answer.
    expect(routeRequest("orders-acme.db.example.com", "/", DOMAIN)?.viaHost).toBe(true);
    expect(routeRequest("orders-acme.db.example.com", "/", "other.example.com")).toBeUndefined();
    expect(routeRequest("orders-acme.db.example.com", "/", DOMAIN)?.viaHost).toBe(true);
    expect(routeRequest(undefined, "/db/acme/orders/", DOMAIN)?.viaHost).toBe(false);
    expect(routeRequest("a.b.c.db.example.com", "/db/acme/orders/", DOMAIN)?.locator).toEqual({
      orgSlug: "acme",
      name: "orders",
    });
  });
});
