import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATA_PLANE_CODES, isShoalCode } from "../../src/dataplane/hrana/error-codes.js";
import { mintToken, pipeline, setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { openHranaSocket } from "../helpers/hrana-ws.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
});
afterAll(() => h.close());

/** An HTTP answer's status, content type and parsed body. */
async function answer(res: Response) {
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    body: (await res.json()) as Record<string, string>,
  };
}

describe("errors on the wire, over real sockets", () => {
  it.each([
    ["an unknown route", "GET", "nope", undefined, 404, "NOT_FOUND"],
    ["a body that is not JSON", "POST", "v2/pipeline", "{not json", 400, "PROTOCOL_ERROR"],
    [
      "a baton of no stream",
      "POST",
      "v3/cursor",
      '{"baton": "x", "batch": {"steps": []}}',
      400,
      "PROTOCOL_ERROR",
    ],
  ])(
    "answers %s with its status and {error, message, code}",
    async (_what, method, route, body, status, code) => {
      const res = await fetch(`${db.urls.httpPath}${route}`, {
        method,
        headers: { authorization: `Bearer ${db.token}`, "content-type": "application/json" },
        body,
      });
      const a = await answer(res);
      expect(a).toMatchObject({ status, type: "application/json", body: { code } });
      expect(Object.keys(a.body).sort()).toEqual(["code", "error", "message"]);
      expect(a.body.error).toBe(a.body.message);
      expect(isShoalCode(a.body.code ?? "")).toBe(true);
    },
  );

  it("keeps a failed statement a result of the pipeline, with a code of the closed set", async () => {
    const r = await pipeline(db.urls.httpPath, db.token, { requests: [sql("SELEC 1"), sql("SELECT 1")] });
    expect(r.status).toBe(200);
    expect(r.body.results[0]).toMatchObject({ type: "error", error: { code: "SQL_INPUT_ERROR" } });
    expect(r.body.results[1].type).toBe("ok");
  });

  it("answers a WebSocket request's own failure in response_error and goes on", async () => {
    const c = await openHranaSocket(db.urls.wsPath, ["hrana3"]);
    c.hello(db.token);
    for (let id = 1; id <= 150; id++) await c.request({ type: "store_sql", sql_id: id, sql: "SELECT 1" });
    const refused = await c.request({ type: "store_sql", sql_id: 151, sql: "SELECT 1" });
    expect(refused).toMatchObject({ type: "response_error", error: { code: "SQL_STORE_TOO_MANY" } });
    expect((await c.request({ type: "open_stream", stream_id: 1 })).type).toBe("response_ok");
    const failed = await c.request({ type: "execute", stream_id: 1, stmt: { sql: "SELEC 1" } });
    expect(failed).toMatchObject({ type: "response_error", error: { code: "SQL_INPUT_ERROR" } });
    const ok = await c.request({ type: "execute", stream_id: 1, stmt: { sql: "SELECT 1" } });
    expect(ok.type).toBe("response_ok");
    c.ws.close();
  });

  it("answers an open_cursor that fails on its own in response_error, and the socket goes on", async () => {
    const token = await mintToken(db.user, db.org, db.name);
    const c = await openHranaSocket(db.urls.wsPath, ["hrana3"]);
    c.hello(token);
    expect((await c.request({ type: "open_stream", stream_id: 1 })).type).toBe("response_ok");
    const revoke = `/v1/organizations/${db.org}/databases/${db.name}/auth/tokens/revoke`;
    expect((await db.user.api.post(revoke, { token })).status).toBe(200);
    const batch = { steps: [{ stmt: { sql: "SELECT 1", want_rows: true } }] };
    const opened = await Promise.race([
      c.request({ type: "open_cursor", stream_id: 1, cursor_id: 1, batch }),
      c.closed.then((code) => ({ type: "closed", code })),
    ]);
    expect(opened).toMatchObject({ type: "response_error", error: { code: "AUTH_JWT_REVOKED" } });
    // Entries asked for anyway: none, and done.
    const fetched = await c.request({ type: "fetch_cursor", cursor_id: 1, max_count: 10 });
    expect(fetched).toMatchObject({ type: "response_ok", response: { entries: [], done: true } });
    expect((await c.request({ type: "close_cursor", cursor_id: 1 })).type).toBe("response_ok");
    c.ws.close();
  });

  it.each([
    [
      "a stored SQL id reused",
      JSON.stringify({ type: "store_sql", sql_id: 1, sql: "SELECT 1" }),
      "SQL text 1 already exists",
    ],
    ["a binary message", Buffer.from("{}"), "only JSON text messages are supported"],
  ])("closes a WebSocket with 1002 and says why: %s", async (_what, second, reason) => {
    const c = await openHranaSocket(db.urls.wsPath, ["hrana3"]);
    const closed = new Promise<[number, string]>((r) =>
      c.ws.once("close", (code, why) => r([code, why.toString()])),
    );
    c.hello(db.token);
    const first = { type: "store_sql", sql_id: 1, sql: "SELECT 1" };
    expect((await c.request(first)).type).toBe("response_ok");
    if (typeof second === "string")
      c.ws.send(JSON.stringify({ type: "request", request_id: 99, request: JSON.parse(second) }));
    else c.ws.send(second);
    expect(await closed).toEqual([1002, reason]);
  });
});

describe("the error-code page", () => {
  it("lists exactly the codes Shoal sends of its own", () => {
    const page = readFileSync(
      path.resolve(import.meta.dirname, "../../docs/operations/error-codes.md"),
      "utf8",
    );
    const listed = new Set([...page.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]));
    expect([...listed].sort()).toEqual(Object.keys(DATA_PLANE_CODES).sort());
  });
});
