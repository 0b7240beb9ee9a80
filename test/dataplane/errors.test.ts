import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken, pipeline, setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  const c = createClient({ url: db.urls.httpPath, authToken: db.token });
  await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)");
  await c.execute("INSERT INTO t (v) VALUES ('x')");
  c.close();
});
afterAll(() => h.close());

async function failure(statement: unknown) {
  const r = await pipeline(db.urls.httpPath, db.token, { requests: [statement, { type: "close" }] });
  expect(r.status).toBe(200);
  expect(r.body.results[0].type).toBe("error");
  return r.body.results[0].error as { message: string; code: string };
}

describe("statement errors, with sqld's codes", () => {
  it("reports constraint violations as SQLITE_CONSTRAINT through the client", async () => {
    const c = createClient({ url: db.urls.wsPath, authToken: db.token });
    await expect(c.execute("INSERT INTO t (v) VALUES ('x')")).rejects.toMatchObject({
      code: "SQLITE_CONSTRAINT",
      message: "SQLITE_CONSTRAINT: SQLite error: UNIQUE constraint failed: t.v",
    });
    c.close();
  });

  it.each([
    ["a syntax error", "SELEC 1", "SQL_INPUT_ERROR", /syntax error/],
    ["an unknown table", "SELECT * FROM nope", "SQL_INPUT_ERROR", /no such table: nope/],
    ["several statements", "SELECT 1; SELECT 2", "SQL_MANY_STATEMENTS", /more than one statement/],
    ["no statement", "  -- only a comment", "SQL_NO_STATEMENT", /does not contain any statement/],
    ["a type mismatch", "INSERT INTO t (id, v) VALUES ('a', 'b')", "SQLITE_MISMATCH", /datatype mismatch/],
  ])("reports %s", async (_what, text, code, message) => {
    const e = await failure(sql(text));
    expect(e.code).toBe(code);
    expect(e.message).toMatch(message);
  });

  it("checks argument counts and kinds", async () => {
    expect((await failure(sql("SELECT ?, ?", [{ type: "null" }]))).code).toBe("ARGS_INVALID");
    expect((await failure(sql("SELECT ?", [{ type: "null" }, { type: "null" }]))).code).toBe("ARGS_INVALID");
    const both = await failure({
      type: "execute",
      stmt: {
        sql: "SELECT ?",
        args: [{ type: "null" }],
        named_args: [{ name: "a", value: { type: "null" } }],
      },
    });
    expect(both.code).toBe("ARGS_BOTH_POSITIONAL_AND_NAMED");
    expect((await failure({ type: "execute", stmt: { sql: "SELECT :a", named_args: [] } })).code).toBe(
      "ARGS_INVALID",
    );
  });

  it("keeps the stream usable after a failed statement", async () => {
    const r = await pipeline(db.urls.httpPath, db.token, {
      requests: [sql("SELECT nope"), sql("SELECT 1"), { type: "close" }],
    });
    expect(r.body.results.map((x: { type: string }) => x.type)).toEqual(["error", "ok", "ok"]);
  });
});

describe("refusals at the HTTP level carry a code the client surfaces", () => {
  it("answers a missing token with 401 AUTH_HEADER_NOT_FOUND in exactly application/json", async () => {
    const r = await pipeline(db.urls.httpPath, undefined, { requests: [sql("SELECT 1")] });
    expect(r.status).toBe(401);
    expect(r.contentType).toBe("application/json");
    expect(r.body).toMatchObject({ code: "AUTH_HEADER_NOT_FOUND", message: expect.any(String) });
    const c = createClient({ url: db.urls.httpPath });
    await expect(c.execute("SELECT 1")).rejects.toMatchObject({ code: "AUTH_HEADER_NOT_FOUND" });
  });

  it("answers a forged or foreign-signed token with AUTH_JWT_INVALID", async () => {
    const [head, body] = db.token.split(".");
    const c = createClient({ url: db.urls.httpPath, authToken: `${head}.${body}.AAAA` });
    await expect(c.execute("SELECT 1")).rejects.toMatchObject({ code: "AUTH_JWT_INVALID" });
    const api = createClient({ url: db.urls.httpPath, authToken: db.user.token });
    await expect(api.execute("SELECT 1")).rejects.toMatchObject({ code: "AUTH_JWT_INVALID" });
  });

  it("gives an unknown database, a foreign database and a deleted database distinct codes", async () => {
    const unknown = createClient({ url: `${h.url}/db/${db.org}/no-such-db/`, authToken: db.token });
    await expect(unknown.execute("SELECT 1")).rejects.toMatchObject({ code: "DATABASE_NOT_FOUND" });

    const other = await setupDatabase(h);
    const foreign = createClient({ url: other.urls.httpPath, authToken: db.token });
    await expect(foreign.execute("SELECT 1")).rejects.toMatchObject({ code: "AUTH_DATABASE_MISMATCH" });

    const doomed = await setupDatabase(h, { user: db.user });
    expect((await db.user.api.delete(`/v1/organizations/${db.org}/databases/${doomed.name}`)).status).toBe(
      200,
    );
    await db.user.api.post(`/v1/organizations/${db.org}/databases`, { name: doomed.name, group: "default" });
    const reborn = createClient({ url: doomed.urls.httpPath, authToken: doomed.token });
    await expect(reborn.execute("SELECT 1")).rejects.toMatchObject({ code: "AUTH_DATABASE_DELETED" });
  });

  it("explains a database URL without its trailing slash", async () => {
    const c = createClient({ url: db.urls.httpPath.replace(/\/$/, ""), authToken: db.token });
    await expect(c.execute("SELECT 1")).rejects.toMatchObject({ code: "URL_MISSING_TRAILING_SLASH" });
  });

  it("refuses malformed pipelines with 400", async () => {
    for (const body of [
      {},
      { requests: "x" },
      { requests: [{ type: "nope" }] },
      { baton: 5, requests: [] },
    ]) {
      const r = await pipeline(db.urls.httpPath, db.token, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.contentType).toBe("application/json");
    }
    const raw = await fetch(`${db.urls.httpPath}v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${db.token}` },
      body: "{not json",
    });
    expect(raw.status).toBe(400);
  });
});

describe("a token opens its own database only", () => {
  it("refuses a token of another database of the same organization", async () => {
    const sibling = await setupDatabase(h, { user: db.user });
    const r = await pipeline(sibling.urls.httpPath, db.token, { requests: [sql("SELECT 1")] });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("AUTH_DATABASE_MISMATCH");
    const own = await pipeline(sibling.urls.httpPath, await mintToken(db.user, db.org, sibling.name), {
      requests: [sql("SELECT 1")],
    });
    expect(own.status).toBe(200);
  });
});
