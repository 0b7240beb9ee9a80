/**
 * `GET /metrics`: who may read it, and that what it shows (parsed as Prometheus text) moves with
 * management calls, SQL over HTTP and WebSocket, rows, replication and backups, with labels that
 * never name a database unless the operator asks.
 */
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { createUser, type TestUser } from "../helpers/factories.js";
import { call } from "../helpers/http.js";
import { scrape } from "../helpers/metrics.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

const SCRAPE_TOKEN = "scrape-token-0123456789abcdef";

let h: TestShoal;
let user: TestUser;
let one: TestDatabase;
let two: TestDatabase;

beforeAll(async () => {
  h = await startTestShoal({ metricsToken: SCRAPE_TOKEN });
  user = await createUser(h);
  one = await setupDatabase(h, { user, name: "metrics-one" });
  two = await setupDatabase(h, { user, name: "metrics-two" });
});
afterAll(() => h.close());

describe("who may read GET /metrics", () => {
  it("answers the administrator's API token and the scrape token", async () => {
    for (const token of [h.adminToken, SCRAPE_TOKEN]) {
      const r = await call(h.url, "GET", "/metrics", { token });
      expect(r.status, r.text).toBe(200);
      expect(r.text).toContain("# TYPE shoal_api_requests_total counter");
    }
  });

  it("refuses a missing, wrong or malformed token with 401, and another user's API token with 403", async () => {
    const cases: Array<[Record<string, string>, number]> = [
      [{}, 401],
      [{ authorization: "Bearer wrong-token-0123456789abcdef" }, 401],
      [{ authorization: `Bearer ${SCRAPE_TOKEN}x` }, 401],
      [{ authorization: `Basic ${Buffer.from(`x:${SCRAPE_TOKEN}`).toString("base64")}` }, 401],
      [{ authorization: `Bearer ${one.token}` }, 401],
      [{ authorization: `Bearer ${user.token}` }, 403],
    ];
    for (const [headers, status] of cases) {
      const r = await call(h.url, "GET", "/metrics", { headers });
      expect(r.status, JSON.stringify(headers)).toBe(status);
      expect(r.body).toEqual({ error: expect.any(String) });
      expect(r.text).not.toContain("shoal_");
    }
  });
});

describe("what GET /metrics shows", () => {
  it("counts management API requests by route template and status, with their latency", async () => {
    const before = await scrape(h.url, SCRAPE_TOKEN);
    const route = "/v1/organizations/:organizationName/databases/:databaseName";
    const labels = { method: "GET", route, status: "200" };
    for (let i = 0; i < 3; i++) {
      expect((await user.api.get(`/v1/organizations/${user.username}/databases/${one.name}`)).status).toBe(
        200,
      );
    }
    expect((await user.api.get(`/v1/organizations/${user.username}/databases/nope`)).status).toBe(404);
    await call(h.url, "GET", "/v1/no/such/route");
    const after = await scrape(h.url, SCRAPE_TOKEN);
    expect(
      after.value("shoal_api_requests_total", labels) - before.value("shoal_api_requests_total", labels),
    ).toBe(3);
    expect(after.value("shoal_api_requests_total", { route, status: "404" })).toBeGreaterThanOrEqual(1);
    expect(
      after.value("shoal_api_requests_total", { route: "unmatched", status: "404" }),
    ).toBeGreaterThanOrEqual(1);
    const latency = { method: "GET", route };
    expect(
      after.value("shoal_api_request_duration_seconds", latency) -
        before.value("shoal_api_request_duration_seconds", latency),
    ).toBe(4);
    expect(after.family("shoal_api_request_duration_seconds")?.type).toBe("histogram");
  });

  it("counts data-plane requests, statements and rows from @libsql/client over HTTP and WebSocket", async () => {
    const before = await scrape(h.url, SCRAPE_TOKEN);
    const http = createClient({ url: one.urls.httpPath, authToken: one.token });
    await http.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    await http.batch([
      { sql: "INSERT INTO t (v) VALUES (?)", args: ["a"] },
      { sql: "INSERT INTO t (v) VALUES (?)", args: ["b"] },
      { sql: "INSERT INTO t (v) VALUES (?)", args: ["c"] },
    ]);
    expect((await http.execute("SELECT v FROM t")).rows).toHaveLength(3);
    const ws = createClient({ url: one.urls.wsPath, authToken: one.token });
    expect((await ws.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(3);
    const open = await scrape(h.url, SCRAPE_TOKEN);
    expect(open.value("shoal_dataplane_websocket_connections")).toBe(1);
    ws.close();
    http.close();
    const after = await scrape(h.url, SCRAPE_TOKEN);
    const moved = (name: string, labels: Record<string, string> = {}) =>
      after.value(name, labels) - before.value(name, labels);
    expect(moved("shoal_statements_total", { kind: "insert" })).toBe(3);
    expect(moved("shoal_statements_total", { kind: "create" })).toBe(1);
    expect(moved("shoal_statements_total", { kind: "select" })).toBe(2);
    expect(moved("shoal_rows_written_total")).toBe(3);
    expect(moved("shoal_rows_read_total")).toBeGreaterThanOrEqual(4);
    expect(moved("shoal_statement_duration_seconds", { kind: "insert" })).toBe(3);
    const pipelines = { transport: "http", endpoint: "pipeline", status: "200" };
    expect(moved("shoal_dataplane_requests_total", pipelines)).toBeGreaterThanOrEqual(3);
    expect(moved("shoal_dataplane_requests_total", { transport: "ws", status: "ok" })).toBeGreaterThanOrEqual(
      1,
    );
    expect(
      moved("shoal_dataplane_request_duration_seconds", { transport: "http", endpoint: "pipeline" }),
    ).toBe(moved("shoal_dataplane_requests_total", { transport: "http", endpoint: "pipeline" }));
    expect(after.value("shoal_engine_connections")).toBeGreaterThanOrEqual(1);
    expect(after.value("shoal_engine_open_databases")).toBeGreaterThanOrEqual(1);
    expect(after.value("shoal_databases_hosted", { location: "aws-us-east-1" })).toBeGreaterThanOrEqual(2);
    await expect
      .poll(async () => (await scrape(h.url, SCRAPE_TOKEN)).value("shoal_dataplane_websocket_connections"))
      .toBe(0);
  });

  it("counts a refused data-plane request by its status", async () => {
    const before = await scrape(h.url, SCRAPE_TOKEN);
    const r = await fetch(`${two.urls.httpPath}v2/pipeline`, { method: "POST", body: "{}" });
    expect(r.status).toBe(401);
    const after = await scrape(h.url, SCRAPE_TOKEN);
    const labels = { transport: "http", endpoint: "pipeline", status: "401" };
    expect(
      after.value("shoal_dataplane_requests_total", labels) -
        before.value("shoal_dataplane_requests_total", labels),
    ).toBe(1);
  });

  it("shows process metrics", async () => {
    const s = await scrape(h.url, SCRAPE_TOKEN);
    expect(s.value("process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(s.family("nodejs_eventloop_lag_seconds")).toBeDefined();
  });

  it("keeps labels bounded: no database label, and no organization or database name in any label", async () => {
    for (const d of [one, two]) {
      const c = createClient({ url: d.urls.httpPath, authToken: d.token });
      await c.execute("SELECT 1");
      c.close();
    }
    const s = await scrape(h.url, SCRAPE_TOKEN);
    expect(s.labelNames().has("database")).toBe(false);
    const values = s.labelValues();
    for (const name of [one.name, two.name, one.id, two.id, user.username]) {
      expect(values.filter((v) => v.includes(name))).toEqual([]);
    }
  });
});
