/**
 * What no token may do through SQL, however it spells it: reach the server's files, change the
 * settings the server relies on, keep another database attached for the next caller, or wedge a
 * database's writes by going away while waiting for its lock.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken, pipeline, setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { openHranaSocket } from "../helpers/hrana-ws.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
let readOnly: string;

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  readOnly = await mintToken(db.user, db.org, db.name, "?authorization=read-only");
  const r = await pipeline(db.urls.httpPath, db.token, {
    requests: [sql("create table t (v)"), sql("insert into t values (1)")],
  });
  expect(r.status).toBe(200);
});
afterAll(() => h.close());

/** The error code of one statement, or "ok". */
async function outcome(statement: string, token = db.token, base = db.urls.httpPath): Promise<string> {
  const r = await pipeline(base, token, { requests: [sql(statement)] });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const first = r.body.results[0];
  return first.type === "ok" ? "ok" : `${first.error.code}: ${first.error.message}`;
}

describe("the server's files", () => {
  it("can't be read, listed or written through SQLite's file functions, however they are spelled", async () => {
    const keys = path.join(h.dataDir, "keys");
    const planted = path.join(h.dataDir, "planted");
    for (const token of [db.token, readOnly]) {
      for (const statement of [
        `SELECT name FROM fsdir('${keys}')`,
        `SELECT readfile('${path.join(keys, "db-tokens.jwk")}')`,
        `SELECT "readfile"('${path.join(keys, "db-tokens.jwk")}')`,
        `SELECT [ReadFile]('${path.join(keys, "db-tokens.jwk")}')`,
        `SELECT writefile('${planted}', 'x')`,
        `SELECT lsmode(1)`,
        `SELECT load_extension('/tmp/nothing')`,
      ]) {
        expect(await outcome(statement, token)).toMatch(/^SQL_PARSE_ERROR: .*not available/);
      }
    }
    // SQLite also takes a string where a table-valued function's name goes.
    for (const statement of [
      `SELECT name FROM 'fsdir'('${keys}')`,
      `SELECT name FROM main.'fsdir'('${keys}')`,
    ]) {
      expect(await outcome(statement)).toMatch(/^SQL_PARSE_ERROR: .*fsdir\(\) .*not available/);
    }
    expect(existsSync(planted)).toBe(false);
    // A string that merely mentions one is fine.
    expect(await outcome("SELECT 'readfile(x)' AS text")).toBe("ok");
  });

  it("stay out of reach on a replica location's reads too", async () => {
    const added = await db.user.api.post(
      `/v1/organizations/${db.org}/groups/default/locations/aws-eu-west-1`,
    );
    expect(added.status, added.text).toBe(200);
    const replica = `${h.url}/db/${db.org}/${db.name}@aws-eu-west-1/`;
    expect(await outcome(`SELECT name FROM fsdir('${h.dataDir}')`, db.token, replica)).toMatch(
      /not available/,
    );
  });
});

describe("the database file's raw pages", () => {
  it("can't be written or read through sqlite_dbpage, however it is spelled", async () => {
    for (const token of [db.token, readOnly]) {
      for (const statement of [
        "UPDATE sqlite_dbpage SET data = zeroblob(4096) WHERE pgno = 1",
        "update main.sqlite_dbpage set data = randomblob(4096) where pgno = 2",
        'UPDATE "sqlite_dbpage" SET data = zeroblob(4096) WHERE pgno = 1',
        "UPDATE [SQLite_DBPage] SET data = zeroblob(4096) WHERE pgno = 1",
        "INSERT INTO `sqlite_dbpage` (pgno, data) VALUES (1, zeroblob(4096))",
        "DELETE FROM sqlite_dbpage WHERE pgno = 2",
        "SELECT data FROM sqlite_dbpage WHERE pgno = 1",
        "SELECT data FROM sqlite_dbpage('main') WHERE pgno = 1",
        "SELECT data FROM 'sqlite_dbpage'",
        "WITH p AS (SELECT * FROM sqlite_dbpage) SELECT count(*) FROM p",
        "EXPLAIN UPDATE sqlite_dbpage SET data = zeroblob(4096) WHERE pgno = 1",
      ]) {
        expect(await outcome(statement, token), statement).toMatch(
          /^SQL_PARSE_ERROR: .*sqlite_dbpage .*raw pages/,
        );
      }
    }
    const r = await pipeline(db.urls.httpPath, db.token, {
      requests: [
        { type: "describe", sql: "UPDATE sqlite_dbpage SET data = zeroblob(4096) WHERE pgno = 1" },
        { type: "batch", batch: { steps: [{ stmt: { sql: "DELETE FROM sqlite_dbpage WHERE pgno = 1" } }] } },
      ],
    });
    expect(r.body.results[0].error.code).toBe("SQL_PARSE_ERROR");
    expect(r.body.results[1].response.result.step_errors[0].code).toBe("SQL_PARSE_ERROR");
    // The file is intact: the table and its row are still there.
    expect(await outcome("SELECT v FROM t")).toBe("ok");
    expect(await outcome("PRAGMA quick_check")).toBe("ok");
  });
});

describe("the server's file paths", () => {
  it("don't show in PRAGMA database_list, whose schema names still do", async () => {
    const r = await pipeline(db.urls.httpPath, db.token, {
      requests: [sql("PRAGMA database_list"), sql('PRAGMA main."database_list"')],
    });
    for (const res of r.body.results) {
      const { cols, rows } = res.response.result;
      expect(cols.map((c: any) => c.name)).toEqual(["seq", "name", "file"]);
      expect(rows).toEqual([
        [
          { type: "integer", value: "0" },
          { type: "text", value: "main" },
          { type: "text", value: "" },
        ],
      ]);
    }
    expect(JSON.stringify(r.body)).not.toContain(h.dataDir);
    const client = createClient({ url: db.urls.wsPath, authToken: db.token });
    const listed = await client.execute("PRAGMA database_list");
    expect(listed.rows[0]?.name).toBe("main");
    expect(JSON.stringify(listed.rows)).not.toContain(h.dataDir);
    client.close();
  });

  it("don't show through the table-valued pragma_database_list either", async () => {
    for (const statement of [
      "SELECT file FROM pragma_database_list",
      "SELECT upper(file) FROM main.pragma_database_list()",
      'SELECT * FROM "PRAGMA_DATABASE_LIST"',
    ]) {
      expect(await outcome(statement), statement).toMatch(/^SQL_PARSE_ERROR: .*pragma_database_list/);
    }
  });

  it("don't show at a replica location", async () => {
    const replica = `${h.url}/db/${db.org}/${db.name}@aws-eu-west-1/`;
    await db.user.api.post(`/v1/organizations/${db.org}/groups/default/locations/aws-eu-west-1`);
    const r = await pipeline(replica, db.token, { requests: [sql("PRAGMA database_list")] });
    expect(r.body.results[0].response.result.rows[0][2]).toEqual({ type: "text", value: "" });
    expect(JSON.stringify(r.body)).not.toContain(h.dataDir);
  });
});

describe("PRAGMAs the server relies on", () => {
  it("can't be set in any spelling: quoted, bracketed, with a schema or a comment", async () => {
    for (const statement of [
      'PRAGMA "busy_timeout" = 99999',
      "PRAGMA [max_page_count] = 10",
      "PRAGMA busy_timeout/**/= 1",
      'PRAGMA main."journal_mode" = DELETE',
      'PRAGMA "hard_heap_limit" = 1',
      'PRAGMA "wal_checkpoint"(TRUNCATE)',
      "PRAGMA wal_checkpoint",
      "PRAGMA query_only = 0",
      "PRAGMA `wal_autocheckpoint` = 1",
    ]) {
      expect(await outcome(statement), statement).toMatch(/^SQL_PARSE_ERROR: .*managed by the server/);
    }
    expect(await outcome("PRAGMA query_only = 0", readOnly)).toMatch(/managed by the server/);
  });

  it("are refused under EXPLAIN, after a stray semicolon and in describe, before SQLite compiles them", async () => {
    // Compiling applies these: were any of them compiled, the next read would show the new value.
    const r = await pipeline(db.urls.httpPath, db.token, {
      requests: [
        sql("EXPLAIN PRAGMA busy_timeout = 4321"),
        sql("EXPLAIN QUERY PLAN PRAGMA busy_timeout = 4322"),
        sql("; PRAGMA busy_timeout = 4323"),
        { type: "describe", sql: "; PRAGMA busy_timeout = 4324" },
        { type: "describe", sql: "PRAGMA 'busy_timeout' = 4325" },
        sql("PRAGMA busy_timeout"),
      ],
    });
    expect(r.status).toBe(200);
    const results = r.body.results as Array<{ type: string; error?: { code: string }; response?: any }>;
    for (const res of results.slice(0, 5)) {
      expect(res.type, JSON.stringify(res)).toBe("error");
      expect(res.error?.code).toBe("SQL_PARSE_ERROR");
    }
    expect(results[5]!.response.result.rows[0][0].value).not.toMatch(/^432/);
  });

  it("leaves a database's own settings and read-only PRAGMAs to its clients", async () => {
    for (const statement of [
      "PRAGMA foreign_keys = ON",
      "PRAGMA user_version = 3",
      "PRAGMA table_info('t')",
      "PRAGMA journal_mode",
      "PRAGMA integrity_check",
    ]) {
      expect(await outcome(statement), statement).toBe("ok");
    }
  });
});

describe("connections shared between callers", () => {
  it("don't keep a database attached by one caller for the next", async () => {
    const other = await setupDatabase(h, { user: db.user });
    await createClient({ url: other.urls.httpPath, authToken: other.token }).executeMultiple(
      "CREATE TABLE secret (v TEXT); INSERT INTO secret VALUES ('only for the granted');",
    );
    await db.user.api.patch(`/v1/organizations/${db.org}/databases/${other.name}/configuration`, {
      allow_attach: true,
    });
    const granted = await mintToken(db.user, db.org, db.name, "", {
      permissions: { read_attach: { databases: [other.name] } },
    });
    const attached = await pipeline(db.urls.httpPath, granted, {
      requests: [sql(`ATTACH '${other.name}' AS o`), sql("SELECT v FROM o.secret"), { type: "close" }],
    });
    expect(attached.body.results[1].type).toBe("ok");
    for (let i = 0; i < 5; i++) {
      expect(await outcome("SELECT v FROM o.secret", readOnly)).toMatch(/no such table: o.secret/);
    }
  });
});

describe("a writer that goes away", () => {
  it("doesn't keep the write lock when its WebSocket closes while it waits for it", async () => {
    const holder = createClient({ url: db.urls.wsPath, authToken: db.token });
    const tx = await holder.transaction("write");
    await tx.execute("INSERT INTO t VALUES (2)");
    const waiter = await openHranaSocket(db.urls.wsPath);
    waiter.hello(db.token);
    await waiter.next((m) => m.type === "hello_ok");
    await waiter.request({ type: "open_stream", stream_id: 1 });
    waiter.ws.send(
      JSON.stringify({
        type: "request",
        request_id: 99,
        request: { type: "execute", stream_id: 1, stmt: { sql: "BEGIN IMMEDIATE", want_rows: false } },
      }),
    );
    await new Promise((r) => setTimeout(r, 100));
    // Still waiting for the lock: no answer yet.
    expect(
      await Promise.race([
        waiter.next((m) => m.request_id === 99),
        new Promise((r) => setTimeout(() => r("waiting"), 50)),
      ]),
    ).toBe("waiting");
    waiter.ws.close();
    await waiter.closed;
    await tx.commit();
    holder.close();
    // Writers after it get the lock at once.
    expect(await outcome("INSERT INTO t VALUES (3)")).toBe("ok");
    expect(await outcome("INSERT INTO t VALUES (4)")).toBe("ok");
  });
});

describe("malformed addresses", () => {
  it("answer 404 for a database path with a broken escape, and the server keeps serving", async () => {
    const r = await pipeline(`${h.url}/db/${db.org}/%zz/`, db.token, { requests: [sql("select 1")] });
    expect(r.status).toBe(404);
    expect((await fetch(`${h.url}/db/%E0%A4%A/x/v2`)).status).toBeLessThan(500);
    expect(await outcome("SELECT 1")).toBe("ok");
  });
});

describe("cursors on an open WebSocket", () => {
  it("stop working for a token revoked after the socket opened", async () => {
    const token = await mintToken(db.user, db.org, db.name);
    const c = await openHranaSocket(db.urls.wsPath);
    c.hello(token);
    await c.next((m) => m.type === "hello_ok");
    await c.request({ type: "open_stream", stream_id: 1 });
    const batch = { steps: [{ stmt: { sql: "SELECT v FROM t", want_rows: true } }] };
    const first = await c.request({ type: "open_cursor", stream_id: 1, cursor_id: 1, batch });
    expect(first.type).toBe("response_ok");
    await c.request({ type: "close_cursor", cursor_id: 1 });
    const revoked = await db.user.api.post(
      `/v1/organizations/${db.org}/databases/${db.name}/auth/tokens/revoke`,
      {
        token,
      },
    );
    expect(revoked.status).toBe(200);
    c.ws.send(
      JSON.stringify({
        type: "request",
        request_id: 50,
        request: { type: "open_cursor", stream_id: 1, cursor_id: 2, batch },
      }),
    );
    const answer = await Promise.race([
      c.next((m) => m.request_id === 50).then((m) => m.type as string),
      c.closed.then(() => "closed"),
    ]);
    expect(answer).not.toBe("response_ok");
  });
});
