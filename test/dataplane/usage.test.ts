import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
const usage = (q = "") => db.user.api.get(`/v1/organizations/${db.org}/databases/${db.name}/usage${q}`);

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
});
afterAll(() => h.close());

describe("usage metering", () => {
  it("counts exactly the rows the statements read and wrote", async () => {
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"); // DDL: no rows
    for (let i = 1; i <= 10; i++) await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`v${i}`] }); // 10 written
    const all = await c.execute("SELECT * FROM t"); // 10 read
    expect(all.rows).toHaveLength(10);
    await c.execute("SELECT * FROM t WHERE id = 3"); // 1 read, by primary key
    const upd = await c.execute("UPDATE t SET v = 'changed' WHERE id <= 3"); // 3 read, 3 written
    expect(upd.rowsAffected).toBe(3);
    await c.execute("DELETE FROM t WHERE id = 10"); // 1 read, 1 written
    c.close();

    const r = await usage();
    expect(r.status).toBe(200);
    expect(r.body.database.uuid).toBe(db.id);
    expect(r.body.database.usage).toMatchObject({ rows_read: 15, rows_written: 14, bytes_synced: 0 });
    expect(r.body.database.usage.storage_bytes).toBeGreaterThan(0);
    expect(r.body.database.total).toEqual(r.body.database.usage);
    expect(r.body.database.instances).toEqual([
      { uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), usage: r.body.database.usage },
    ]);
  });

  it("counts the rows a full scan reads, not only what it returns", async () => {
    const before = (await usage()).body.database.usage.rows_read;
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    const rs = await c.execute("SELECT * FROM t WHERE v = 'v5'"); // no index on v: scans all 9 rows
    expect(rs.rows).toHaveLength(1);
    c.close();
    expect((await usage()).body.database.usage.rows_read - before).toBeGreaterThanOrEqual(8);
  });

  it("reports per-statement counts in each result", async () => {
    const res = await fetch(`${db.urls.httpPath}v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${db.token}` },
      body: JSON.stringify({
        requests: [{ type: "execute", stmt: { sql: "UPDATE t SET v = 'x' WHERE id IN (1, 2)" } }],
      }),
    });
    const result = ((await res.json()) as any).results[0].response.result;
    expect(result).toMatchObject({ rows_read: 2, rows_written: 2, affected_row_count: 2 });
    expect(result.query_duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("lists the top queries with their counts", async () => {
    const r = await db.user.api.get(`/v1/organizations/${db.org}/databases/${db.name}/stats`);
    expect(r.status).toBe(200);
    const insert = r.body.top_queries.find(
      (q: { query: string }) => q.query === "INSERT INTO t (v) VALUES (?)",
    );
    expect(insert).toEqual({
      query: "INSERT INTO t (v) VALUES (?)",
      rows_read: 0,
      rows_written: 10,
      count: 10,
    });
    const first = r.body.top_queries[0];
    expect(first.rows_read + first.rows_written).toBeGreaterThanOrEqual(
      insert.rows_read + insert.rows_written,
    );
  });

  it("filters by period and refuses malformed times", async () => {
    const future = await usage("?from=2099-01-01T00:00:00Z&to=2099-01-31T00:00:00Z");
    expect(future.body.database.usage).toMatchObject({ rows_read: 0, rows_written: 0 });
    const bad = await usage("?from=yesterday");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^invalid from parameter/);
    expect((await usage("?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z")).status).toBe(400);
  });

  it("keeps the counts across a restart", async () => {
    const before = (await usage()).body.database.usage;
    await h.restart();
    expect((await usage()).body.database.usage).toMatchObject({
      rows_read: before.rows_read,
      rows_written: before.rows_written,
    });
  });
});
