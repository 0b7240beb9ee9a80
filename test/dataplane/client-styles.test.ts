import { type Client, createClient } from "@libsql/client";
import { connect } from "@tursodatabase/serverless";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
});
afterAll(() => h.close());

const forms = ["httpPath", "wsPath", "httpHost", "wsHost"] as const;

describe.each(forms)("@libsql/client over %s", (form) => {
  let c: Client;
  const table = `t_${form}`;

  beforeAll(async () => {
    c = createClient({ url: db.urls[form], authToken: db.token });
    await c.execute(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`);
  });
  afterAll(() => c.close());

  it("runs execute with positional and named arguments", async () => {
    const ins = await c.execute({ sql: `INSERT INTO ${table} (v) VALUES (?)`, args: ["one"] });
    expect(ins.rowsAffected).toBe(1);
    expect(ins.lastInsertRowid).toBe(1n);
    const named = await c.execute({ sql: `INSERT INTO ${table} (v) VALUES (:v)`, args: { v: "two" } });
    expect(named.lastInsertRowid).toBe(2n);
    const rs = await c.execute({
      sql: `SELECT id, v FROM ${table} WHERE id >= $min ORDER BY id`,
      args: { min: 1 },
    });
    expect(rs.columns).toEqual(["id", "v"]);
    expect(rs.columnTypes).toEqual(["INTEGER", "TEXT"]);
    expect(rs.rows.map((r) => [r.id, r.v])).toEqual([
      [1, "one"],
      [2, "two"],
    ]);
  });

  it("runs a batch atomically: a failing statement rolls back the whole batch", async () => {
    await c.batch(
      [`INSERT INTO ${table} (v) VALUES ('b1')`, `INSERT INTO ${table} (v) VALUES ('b2')`],
      "write",
    );
    await expect(
      c.batch([`INSERT INTO ${table} (v) VALUES ('b3')`, `INSERT INTO ${table} (v) VALUES (NULL)`], "write"),
    ).rejects.toMatchObject({ code: "SQLITE_CONSTRAINT" });
    const rs = await c.execute(`SELECT v FROM ${table} WHERE v LIKE 'b%' ORDER BY v`);
    expect(rs.rows.map((r) => r.v)).toEqual(["b1", "b2"]);
  });

  it("commits an interactive transaction spanning several requests", async () => {
    const tx = await c.transaction("write");
    await tx.execute(`INSERT INTO ${table} (v) VALUES ('tx1')`);
    const inside = await tx.execute(`SELECT count(*) AS n FROM ${table} WHERE v = 'tx1'`);
    expect(inside.rows[0]!.n).toBe(1);
    await tx.execute(`INSERT INTO ${table} (v) VALUES ('tx2')`);
    await tx.commit();
    const rs = await c.execute(`SELECT count(*) AS n FROM ${table} WHERE v LIKE 'tx%'`);
    expect(rs.rows[0]!.n).toBe(2);
  });

  it("rolls back an interactive transaction that is closed without commit", async () => {
    const tx = await c.transaction("write");
    await tx.execute(`INSERT INTO ${table} (v) VALUES ('abandoned')`);
    tx.close();
    // The write lock must be free again: another write goes through at once.
    await c.execute(`INSERT INTO ${table} (v) VALUES ('after')`);
    const rs = await c.execute(`SELECT count(*) AS n FROM ${table} WHERE v = 'abandoned'`);
    expect(rs.rows[0]!.n).toBe(0);
  });

  it("rolls back on rollback() and reads in a read transaction", async () => {
    const tx = await c.transaction("write");
    await tx.execute(`DELETE FROM ${table}`);
    await tx.rollback();
    const read = await c.transaction("read");
    const rs = await read.execute(`SELECT count(*) AS n FROM ${table}`);
    expect(Number(rs.rows[0]!.n)).toBeGreaterThan(0);
    await read.commit();
  });

  it("runs executeMultiple and migrate", async () => {
    await c.executeMultiple(`
      CREATE TABLE ${table}_m (x INTEGER); -- a comment; with a semicolon
      INSERT INTO ${table}_m VALUES (1);
      INSERT INTO ${table}_m VALUES (';');
    `);
    await c.migrate([`CREATE TABLE ${table}_mig (a)`, `INSERT INTO ${table}_mig VALUES (42)`]);
    const m = await c.execute(`SELECT count(*) AS n FROM ${table}_m`);
    expect(m.rows[0]!.n).toBe(2);
    const mig = await c.execute(`SELECT a FROM ${table}_mig`);
    expect(mig.rows[0]!.a).toBe(42);
  });
});

describe.each(["httpPath", "httpHost"] as const)("@tursodatabase/serverless over %s", (form) => {
  it("executes, batches and runs a transaction", async () => {
    const url = form === "httpPath" ? db.urls.httpPath.replace(/\/$/, "") : db.urls.httpHost;
    const conn = connect({ url, authToken: db.token });
    const table = `s_${form}`;
    await conn.exec(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, v TEXT)`);
    await conn.run(`INSERT INTO ${table} (v) VALUES (?)`, "a");
    expect(await conn.get(`SELECT v FROM ${table} WHERE id = ?`, 1)).toEqual({ v: "a" });
    await conn.batch([`INSERT INTO ${table} (v) VALUES ('b')`, `INSERT INTO ${table} (v) VALUES ('c')`]);
    const tx = conn.transactionAsync(async (t) => {
      await t.run(`INSERT INTO ${table} (v) VALUES ('d')`);
    });
    await tx();
    const all = await conn.all(`SELECT v FROM ${table} ORDER BY id`);
    expect(all.map((r) => r.v)).toEqual(["a", "b", "c", "d"]);
    const stmt = await conn.prepare(`SELECT id, v FROM ${table} WHERE v = ?`);
    expect(await stmt.get("c")).toEqual({ id: 3, v: "c" });
    await expect(conn.run(`INSERT INTO ${table} (id, v) VALUES (1, 'dup')`)).rejects.toMatchObject({
      code: "SQLITE_CONSTRAINT",
    });
    await conn.close();
  });
});
