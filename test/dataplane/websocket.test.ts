import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { openHranaSocket } from "../helpers/hrana-ws.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
});
afterAll(() => h.close());

/** A raw Hrana WebSocket to the test database (or `url`). */
const open = (protocols: string[], url = db.urls.wsPath) => openHranaSocket(url, protocols);

describe("Hrana over WebSocket", () => {
  it("prefers hrana3 when offered, and answers hrana2 clients with hrana2", async () => {
    const v3 = await open(["hrana2", "hrana3"]);
    expect(v3.ws.protocol).toBe("hrana3");
    v3.ws.close();
    const v2 = await open(["hrana2", "hrana1"]);
    expect(v2.ws.protocol).toBe("hrana2");
    v2.ws.close();
  });

  it("answers a bad token with hello_error and closes", async () => {
    const c = await open(["hrana2"]);
    c.hello("not-a-jwt");
    const m = await c.next((x) => x.type === "hello_error");
    expect(m.error.code).toBe("AUTH_JWT_INVALID");
    expect(await c.closed).toBe(1008);
  });

  it("runs streams, shares stored SQL across them, and serves cursors", async () => {
    const c = await open(["hrana3"]);
    c.hello(db.token);
    expect((await c.next((x) => x.type === "hello_ok" || x.type === "hello_error")).type).toBe("hello_ok");
    expect((await c.request({ type: "open_stream", stream_id: 1 })).type).toBe("response_ok");
    expect((await c.request({ type: "open_stream", stream_id: 2 })).type).toBe("response_ok");
    await c.request({ type: "store_sql", sql_id: 5, sql: "SELECT ? * 2" });
    for (const stream_id of [1, 2]) {
      const r = await c.request({
        type: "execute",
        stream_id,
        stmt: { sql_id: 5, args: [{ type: "integer", value: "21" }] },
      });
      expect(r.response.result.rows[0][0]).toEqual({ type: "integer", value: "42" });
    }
    const err = await c.request({ type: "execute", stream_id: 1, stmt: { sql: "SELECT nope" } });
    expect(err).toMatchObject({ type: "response_error", error: { code: "SQL_INPUT_ERROR" } });

    await c.request({
      type: "open_cursor",
      stream_id: 2,
      cursor_id: 9,
      batch: { steps: [{ stmt: { sql: "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3" } }] },
    });
    const page1 = await c.request({ type: "fetch_cursor", cursor_id: 9, max_count: 2 });
    expect(page1.response.done).toBe(false);
    expect(page1.response.entries.map((e: { type: string }) => e.type)).toEqual(["step_begin", "row"]);
    const page2 = await c.request({ type: "fetch_cursor", cursor_id: 9, max_count: 10 });
    expect(page2.response).toMatchObject({ type: "fetch_cursor", done: true });
    expect(page2.response.entries.map((e: { type: string }) => e.type)).toEqual(["row", "row", "step_end"]);
    expect((await c.request({ type: "close_cursor", cursor_id: 9 })).type).toBe("response_ok");
    expect((await c.request({ type: "get_autocommit", stream_id: 1 })).response).toEqual({
      type: "get_autocommit",
      is_autocommit: true,
    });
    expect((await c.request({ type: "close_stream", stream_id: 1 })).type).toBe("response_ok");
    c.ws.close();
  });

  it("lets a second stream on the same socket wait for the first stream's write lock", async () => {
    const c = await open(["hrana2"]);
    c.hello(db.token);
    await c.request({ type: "open_stream", stream_id: 1 });
    await c.request({ type: "open_stream", stream_id: 2 });
    await c.request({ type: "execute", stream_id: 1, stmt: { sql: "CREATE TABLE IF NOT EXISTS w (v)" } });
    await c.request({ type: "execute", stream_id: 1, stmt: { sql: "BEGIN IMMEDIATE" } });
    await c.request({ type: "execute", stream_id: 1, stmt: { sql: "INSERT INTO w VALUES (1)" } });
    const blocked = c.request({ type: "execute", stream_id: 2, stmt: { sql: "INSERT INTO w VALUES (2)" } });
    // Stream 1 must still be served while stream 2 waits on the same socket.
    const commit = await c.request({ type: "execute", stream_id: 1, stmt: { sql: "COMMIT" } });
    expect(commit.type).toBe("response_ok");
    expect((await blocked).type).toBe("response_ok");
    const n = await c.request({ type: "execute", stream_id: 1, stmt: { sql: "SELECT count(*) FROM w" } });
    expect(n.response.result.rows[0][0].value).toBe("2");
    c.ws.close();
  });

  it("closes the socket on a malformed message", async () => {
    const c = await open(["hrana2"]);
    c.ws.send("{not json");
    expect(await c.closed).toBe(1002);
  });

  it("answers an upgrade to a path that is not a database with 404", async () => {
    const ws = new WebSocket(`${h.url.replace("http:", "ws:")}/v1/organizations`, ["hrana2"]);
    const status = await new Promise<number>((r) =>
      ws.on("unexpected-response", (_req, res) => r(res.statusCode ?? 0)),
    );
    expect(status).toBe(404);
  });
});
