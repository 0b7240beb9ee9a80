/**
 * How statements are prepared and reported: many distinct texts in one batch (the work stays
 * linear: dropped statements are finalized, not left for SQLite to walk), schema changes made by
 * another stream, 64-bit rowids and parameter names.
 */
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATEMENT_CACHE } from "../../src/engine/connection.js";
import { pipeline, setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
});
afterAll(() => h.close());

const send = (body: unknown) => pipeline(db.urls.httpPath, db.token, body);
const int = (v: number | string) => ({ type: "integer", value: String(v) });

/** Runs `steps` as one v2 batch and returns its result. */
async function batch(steps: Array<{ sql: string; args?: unknown[] }>) {
  const r = await send({
    requests: [
      { type: "batch", batch: { steps: steps.map((s) => ({ stmt: { sql: s.sql, args: s.args ?? [] } })) } },
      { type: "close" },
    ],
  });
  expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
  return r.body.results[0].response.result as { step_results: any[]; step_errors: any[] };
}

/** Statements SQLite holds on the connection (prepared and not yet finalized). */
const LIVE = "SELECT count(*) FROM sqlite_stmt";

describe("a batch of many distinct statements", () => {
  it("answers 4,000 steps of 200 texts correctly, as libsql-client-ts's suite sends them", async () => {
    const steps = [];
    for (let i = 0; i < 20; i++)
      for (let j = 0; j < 200; j++) steps.push({ sql: `SELECT ?, ${j}`, args: [int(i)] });
    const result = await batch(steps);
    expect(result.step_errors.every((e) => e === null)).toBe(true);
    result.step_results.forEach((r, k) => {
      expect(r.rows[0]).toEqual([int(Math.floor(k / 200)), int(k % 200)]);
    });
  });

  it("finalizes the statements it no longer needs, so each costs the same however many came before", async () => {
    // Before: every statement (and a helper per statement) stayed alive until the batch ended,
    // and each new prepare read sqlite_stmt, which walks them all: O(n^2).
    const n = 6000;
    const steps = Array.from({ length: n }, (_, i) => ({ sql: `SELECT ?, ${i}`, args: [int(i)] }));
    const result = await batch([...steps, { sql: LIVE }]);
    expect(result.step_errors.every((e) => e === null)).toBe(true);
    const live = Number(result.step_results[n].rows[0][0].value);
    // The statement cache, plus what waits for the next sweep (4,096), plus the engine's own;
    // without sweeps, two per step (the statement and its EXPLAIN) would still be alive.
    expect(live).toBeLessThan(STATEMENT_CACHE + 4096 + 16);
  });

  it("keeps statements that read the scan counter cheap: few dead statements are left to walk", async () => {
    await batch([{ sql: "CREATE TABLE scanned (v)" }, { sql: "INSERT INTO scanned VALUES (1), (2), (3)" }]);
    const n = 600;
    const steps = Array.from({ length: n }, (_, i) => ({ sql: `SELECT v FROM scanned WHERE v = ${i}` }));
    const result = await batch([...steps, { sql: `SELECT v, (${LIVE}) FROM scanned WHERE v = 1` }]);
    expect(result.step_errors.every((e) => e === null)).toBe(true);
    const live = Number(result.step_results[n].rows[0][1].value);
    // The last statement scans: before it ran, at most 128 dropped statements were waiting.
    expect(live).toBeLessThan(STATEMENT_CACHE + 128 + 16);
  });
});

describe("a schema changed by another stream", () => {
  it("is seen by every pooled connection: new statements compile and cached ones report new columns", async () => {
    await batch([{ sql: "DROP TABLE IF EXISTS t" }, { sql: "CREATE TABLE t (a)" }]);
    // Two streams open at once take two connections, which load t(a) and go back to the pool.
    const s1 = await send({ requests: [sql("SELECT * FROM t")] });
    const s2 = await send({ requests: [sql("SELECT * FROM t")] });
    for (const s of [s1, s2]) expect(s.body.results[0].type).toBe("ok");
    for (const s of [s1, s2]) await send({ baton: s.body.baton, requests: [{ type: "close" }] });
    const ddl = await send({
      requests: [sql("DROP TABLE t"), sql("CREATE TABLE t (a, b)"), { type: "close" }],
    });
    expect(ddl.body.results.map((r: any) => r.type)).toEqual(["ok", "ok", "ok"]);
    // Two new streams at once: one of them gets a connection that last saw t(a).
    const i1 = await send({ requests: [sql("INSERT INTO t VALUES (1, 2)"), sql("SELECT * FROM t")] });
    const i2 = await send({ requests: [sql("INSERT INTO t VALUES (3, 4)"), sql("SELECT * FROM t")] });
    for (const s of [i1, i2]) {
      expect(s.body.results[0], JSON.stringify(s.body.results[0])).toMatchObject({ type: "ok" });
      expect(s.body.results[1].response.result.cols.map((c: any) => c.name)).toEqual(["a", "b"]);
      await send({ baton: s.body.baton, requests: [{ type: "close" }] });
    }
  });

  it("is seen after the stream waited for another writer's lock", async () => {
    await batch([{ sql: "DROP TABLE IF EXISTS w" }, { sql: "CREATE TABLE w (a)" }]);
    const holder = await send({ requests: [sql("BEGIN IMMEDIATE"), sql("ALTER TABLE w ADD COLUMN b")] });
    // Compiled against w(a); it runs once the holder committed w(a, b).
    const waiting = send({ requests: [sql("INSERT INTO w (a) VALUES (1) RETURNING *"), { type: "close" }] });
    await send({ baton: holder.body.baton, requests: [sql("COMMIT"), { type: "close" }] });
    const result = (await waiting).body.results[0].response.result;
    expect(result.cols.map((c: any) => c.name)).toEqual(["a", "b"]);
    expect(result.rows).toEqual([[int(1), { type: "null" }]]);
  });
});

describe("last_insert_rowid", () => {
  it("stays exact past 2^53, over raw Hrana and through @libsql/client", async () => {
    await batch([{ sql: "CREATE TABLE big (id INTEGER PRIMARY KEY, v)" }]);
    const r = await send({ requests: [sql("INSERT INTO big VALUES (9223372036854775807, 'max')")] });
    expect(r.body.results[0].response.result.last_insert_rowid).toBe("9223372036854775807");
    const client = createClient({ url: db.urls.wsPath, authToken: db.token });
    const rs = await client.execute("INSERT INTO big VALUES (9007199254740993, 'odd')");
    expect(rs.lastInsertRowid).toBe(9007199254740993n);
    client.close();
  });
});

describe("parameter names", () => {
  it("describe names ?NNN parameters as written, like sqld", async () => {
    const r = await send({ requests: [{ type: "describe", sql: "SELECT ?, ?3, :one" }, { type: "close" }] });
    expect(r.body.results[0].response.result.params).toEqual([
      { name: null },
      { name: null },
      { name: "?3" },
      { name: ":one" },
    ]);
  });

  it("binds ?NNN parameters to positional arguments", async () => {
    const r = await send({
      requests: [sql("SELECT ?3, ?1, ?", [int(1), int(2), int(3), int(4)]), sql("SELECT ?2", [int(5)])],
    });
    expect(r.body.results[0].response.result.rows[0]).toEqual([int(3), int(1), int(4)]);
    expect(r.body.results[1]).toMatchObject({ type: "error", error: { code: "ARGS_INVALID" } });
  });
});
