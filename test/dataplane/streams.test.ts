import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipeline, setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;

beforeAll(async () => {
  // Short limits so expiry and timeouts can be observed quickly.
  h = await startTestShoal({ streamIdleTimeoutMs: 400, transactionTimeoutMs: 600 });
  db = await setupDatabase(h);
  await createClient({ url: db.urls.httpPath, authToken: db.token }).execute("CREATE TABLE t (v TEXT)");
});
afterAll(() => h.close());

const send = (body: unknown, version: "v2" | "v3" = "v2") =>
  pipeline(db.urls.httpPath, db.token, body, version);
const count = async () =>
  Number(
    (await send({ requests: [sql("SELECT count(*) FROM t"), { type: "close" }] })).body.results[0].response
      .result.rows[0][0].value,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("streams over HTTP", () => {
  it("keeps a transaction open across requests with a new baton each time", async () => {
    const first = await send({ requests: [sql("BEGIN"), sql("INSERT INTO t VALUES ('a')")] });
    const b1 = first.body.baton as string;
    expect(b1).toEqual(expect.any(String));
    const second = await send({ baton: b1, requests: [sql("INSERT INTO t VALUES ('b')")] });
    const b2 = second.body.baton as string;
    expect(b2).not.toBe(b1);
    const done = await send({ baton: b2, requests: [sql("COMMIT"), { type: "close" }] });
    expect(done.body.baton).toBeNull();
    expect(await count()).toBe(2);
  });

  it("refuses a reused baton and a forged one", async () => {
    const a = await send({ requests: [sql("SELECT 1")] });
    const baton = a.body.baton as string;
    await send({ baton, requests: [sql("SELECT 1")] });
    const reused = await send({ baton, requests: [sql("SELECT 1")] });
    expect(reused.status).toBe(400);
    expect(reused.body.message).toMatch(/baton/);
    const [id, seq] = baton.split(".");
    const forged = await send({ baton: `${id}.${Number(seq) + 1}.AAAAAAAAAAAAAAAAAAAAAA`, requests: [] });
    expect(forged).toMatchObject({ status: 400, body: { message: "invalid baton" } });
  });

  it("expires an idle stream, rolling its transaction back and freeing the write lock", async () => {
    const open = await send({ requests: [sql("BEGIN IMMEDIATE"), sql("INSERT INTO t VALUES ('lost')")] });
    await sleep(700);
    const late = await send({ baton: open.body.baton, requests: [sql("COMMIT")] });
    expect(late.status).toBe(400);
    expect(late.contentType).toBe("application/json");
    expect(late.body).toMatchObject({
      code: "STREAM_EXPIRED",
      message: "The stream has expired due to inactivity",
    });
    // Another writer proceeds at once and the lost row is gone.
    const other = await send({ requests: [sql("INSERT INTO t VALUES ('next')"), { type: "close" }] });
    expect(other.body.results[0].type).toBe("ok");
    const rows = await send({
      requests: [sql("SELECT count(*) FROM t WHERE v = 'lost'"), { type: "close" }],
    });
    expect(rows.body.results[0].response.result.rows[0][0].value).toBe("0");
  });

  it("rolls back a write transaction that outlives the timeout once another writer waits", async () => {
    const holder = createClient({ url: db.urls.httpPath, authToken: db.token });
    const waiter = createClient({ url: db.urls.wsPath, authToken: db.token });
    const tx = await holder.transaction("write");
    await tx.execute("INSERT INTO t VALUES ('held')");
    const started = Date.now();
    // Keep the holder's stream alive (below the idle limit) while a second writer waits. The first
    // statement after the forced rollback reports it: a keep-alive still in flight, or the commit.
    const codes: string[] = [];
    let inFlight: Promise<unknown> = Promise.resolve();
    const keepAlive = setInterval(() => {
      inFlight = tx.execute("SELECT 1").catch((e: { code?: string }) => codes.push(e.code ?? "?"));
    }, 150);
    await waiter.execute("INSERT INTO t VALUES ('waiter')");
    clearInterval(keepAlive);
    await inFlight;
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    const commit = await tx.commit().then(
      () => "committed",
      (e: { code?: string }) => e.code ?? "?",
    );
    expect([...codes, commit][0]).toBe("TRANSACTION_TIMEOUT");
    expect(commit).not.toBe("committed");
    const held = await send({
      requests: [sql("SELECT count(*) FROM t WHERE v = 'held'"), { type: "close" }],
    });
    expect(held.body.results[0].response.result.rows[0][0].value).toBe("0");
    holder.close();
    waiter.close();
  });

  it("lets a long transaction live while nobody else wants to write", async () => {
    const first = await send({ requests: [sql("BEGIN IMMEDIATE"), sql("INSERT INTO t VALUES ('slow')")] });
    let baton = first.body.baton as string;
    for (let i = 0; i < 4; i++) {
      await sleep(250);
      baton = (await send({ baton, requests: [sql("SELECT 1")] })).body.baton;
    }
    const done = await send({ baton, requests: [sql("COMMIT"), { type: "close" }] });
    expect(done.body.results[0].type).toBe("ok");
  });

  it("serialises two writers: the second waits for the first to commit", async () => {
    const a = createClient({ url: db.urls.httpPath, authToken: db.token });
    const b = createClient({ url: db.urls.httpPath, authToken: db.token });
    const txA = await a.transaction("write");
    await txA.execute("INSERT INTO t VALUES ('A1')");
    let bDone = false;
    const bWrite = b.execute("INSERT INTO t VALUES ('B')").then(() => {
      bDone = true;
    });
    await sleep(100);
    expect(bDone).toBe(false);
    await txA.execute("INSERT INTO t VALUES ('A2')");
    await txA.commit();
    await bWrite;
    const order = await a.execute("SELECT v FROM t WHERE v IN ('A1', 'A2', 'B') ORDER BY rowid");
    expect(order.rows.map((r) => r.v)).toEqual(["A1", "A2", "B"]);
  });
});

describe("stored SQL, sequence, describe and Hrana 3 requests", () => {
  it("stores SQL per stream and refuses a reused id and an unknown one", async () => {
    const r = await send({
      requests: [
        { type: "store_sql", sql_id: 1, sql: "SELECT ? + 1" },
        { type: "execute", stmt: { sql_id: 1, args: [{ type: "integer", value: "41" }] } },
        { type: "close_sql", sql_id: 1 },
        { type: "close_sql", sql_id: 99 },
        { type: "close" },
      ],
    });
    expect(r.body.results[1].response.result.rows[0][0]).toEqual({ type: "integer", value: "42" });
    const dup = await send({
      requests: [
        { type: "store_sql", sql_id: 1, sql: "SELECT 1" },
        { type: "store_sql", sql_id: 1, sql: "SELECT 2" },
      ],
    });
    expect(dup.status).toBe(400);
    const unknown = await send({ requests: [{ type: "execute", stmt: { sql_id: 7 } }] });
    expect(unknown).toMatchObject({ status: 400, body: { message: "SQL text 7 not found" } });
  });

  it("limits stored SQL like sqld", async () => {
    const many = Array.from({ length: 51 }, (_, i) => ({ type: "store_sql", sql_id: i, sql: "SELECT 1" }));
    const r = await send({ requests: [...many, { type: "close" }] });
    expect(r.body.results[50]).toMatchObject({ type: "error", error: { code: "SQL_STORE_TOO_MANY" } });
    const big = await send({
      requests: [{ type: "store_sql", sql_id: 1, sql: `SELECT '${"x".repeat(6000)}'` }],
    });
    expect(big.body.results[0]).toMatchObject({ type: "error", error: { code: "SQL_STORE_TOO_LARGE" } });
  });

  it("runs a sequence, stopping at the first error", async () => {
    const r = await send({
      requests: [
        { type: "sequence", sql: "INSERT INTO t VALUES ('s1'); SELECT nope; INSERT INTO t VALUES ('s2');" },
        { type: "close" },
      ],
    });
    expect(r.body.results[0]).toMatchObject({ type: "error", error: { code: "SQL_INPUT_ERROR" } });
    const rows = await send({
      requests: [sql("SELECT v FROM t WHERE v LIKE 's_' ORDER BY v"), { type: "close" }],
    });
    expect(rows.body.results[0].response.result.rows).toEqual([[{ type: "text", value: "s1" }]]);
  });

  it("describes a statement", async () => {
    const r = await send(
      {
        requests: [
          { type: "describe", sql: "SELECT v, ? AS p FROM t WHERE v = :name" },
          { type: "describe", sql: "INSERT INTO t VALUES (1)" },
        ],
      },
      "v3",
    );
    expect(r.body.results[0].response).toEqual({
      type: "describe",
      result: {
        params: [{ name: null }, { name: ":name" }],
        cols: [
          { name: "v", decltype: "TEXT" },
          { name: "p", decltype: null },
        ],
        is_explain: false,
        is_readonly: true,
      },
    });
    expect(r.body.results[1].response.result.is_readonly).toBe(false);
  });

  it("answers get_autocommit and evaluates batch conditions, including is_autocommit", async () => {
    const r = await send(
      {
        requests: [
          {
            type: "batch",
            batch: {
              steps: [
                { stmt: { sql: "BEGIN" } },
                { stmt: { sql: "SELECT nope" } },
                { condition: { type: "error", step: 1 }, stmt: { sql: "SELECT 'error ran'" } },
                {
                  condition: {
                    type: "and",
                    conds: [
                      { type: "ok", step: 0 },
                      { type: "not", cond: { type: "is_autocommit" } },
                    ],
                  },
                  stmt: { sql: "SELECT 'in txn'" },
                },
                { condition: { type: "ok", step: 1 }, stmt: { sql: "SELECT 'skipped'" } },
                {
                  condition: {
                    type: "or",
                    conds: [
                      { type: "ok", step: 4 },
                      { type: "error", step: 4 },
                    ],
                  },
                  stmt: { sql: "SELECT 'skipped too'" },
                },
                { stmt: { sql: "ROLLBACK" } },
              ],
            },
          },
          { type: "get_autocommit" },
          { type: "close" },
        ],
      },
      "v3",
    );
    const batch = r.body.results[0].response.result;
    expect(batch.step_results.map((x: unknown) => x !== null)).toEqual([
      true,
      false,
      true,
      true,
      false,
      false,
      true,
    ]);
    expect(batch.step_errors.map((x: unknown) => x !== null)).toEqual([
      false,
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(batch.replication_index).toBeNull();
    expect(r.body.results[1].response).toEqual({ type: "get_autocommit", is_autocommit: true });
  });

  it("refuses a condition on a later step as a protocol error", async () => {
    const r = await send({
      requests: [
        {
          type: "batch",
          batch: {
            steps: [
              { condition: { type: "ok", step: 1 }, stmt: { sql: "SELECT 1" } },
              { stmt: { sql: "SELECT 2" } },
            ],
          },
        },
      ],
    });
    expect(r.status).toBe(400);
  });
});

describe("the v3 cursor", () => {
  it("streams a batch as newline-separated entries after the baton line", async () => {
    const res = await fetch(`${db.urls.httpPath}v3/cursor`, {
      method: "POST",
      headers: { authorization: `Bearer ${db.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        baton: null,
        batch: {
          steps: [{ stmt: { sql: "SELECT 1 AS a UNION ALL SELECT 2" } }, { stmt: { sql: "SELECT nope" } }],
        },
      }),
    });
    expect(res.status).toBe(200);
    const lines = (await res.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toEqual({ baton: expect.any(String), base_url: null });
    expect(lines.slice(1).map((e) => e.type)).toEqual(["step_begin", "row", "row", "step_end", "step_error"]);
    expect(lines[1]).toEqual({ type: "step_begin", step: 0, cols: [{ name: "a", decltype: null }] });
    expect(lines[2]).toEqual({ type: "row", row: [{ type: "integer", value: "1" }] });
    expect(lines[5]).toMatchObject({ type: "step_error", step: 1, error: { code: "SQL_INPUT_ERROR" } });
  });
});
