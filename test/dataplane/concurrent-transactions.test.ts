import { type Client, createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

/**
 * Transactions from several clients on one database at once wait their turn for the write lock,
 * as sqld's do, and all commit: none fails with SQLITE_BUSY. Statements that may run long run off
 * the event loop, so one client's transaction is still open when the next one's begins.
 */
let h: TestShoal;
let db: TestDatabase;
const clients: Client[] = [];

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  const c = createClient({ url: db.urls.httpPath, authToken: db.token });
  await c.execute("CREATE TABLE t (v TEXT)");
  c.close();
}, 60_000);
afterAll(async () => {
  for (const c of clients) c.close();
  await h?.close();
});

const client = (url: string) => {
  const c = createClient({ url, authToken: db.token });
  clients.push(c);
  return c;
};

describe("concurrent transactions on one database", () => {
  // INSERT ... SELECT runs off the event loop (its program loops); VALUES with a plain value doesn't.
  const offLoop = "INSERT INTO t (v) SELECT 'x' AS v";
  const onLoop = "INSERT INTO t (v) VALUES ('y')";

  it.each([
    ["HTTP", () => db.urls.httpPath],
    ["WebSocket", () => db.urls.wsPath],
  ])("over %s all commit, each batch waiting for the lock instead of failing", async (_, url) => {
    const before = Number((await client(url()).execute("SELECT count(*) AS n FROM t")).rows[0]!.n);
    const writers = [client(url()), client(url()), client(url())];
    await Promise.all(
      writers.map(async (c) => {
        for (let i = 0; i < 15; i++) await c.batch([offLoop, onLoop, offLoop], "deferred");
      }),
    );
    const after = Number((await client(url()).execute("SELECT count(*) AS n FROM t")).rows[0]!.n);
    expect(after - before).toBe(3 * 15 * 3);
  });

  it("still ends a transaction that read first and then writes after another's commit with SQLITE_BUSY, as SQLite does", async () => {
    const a = client(db.urls.wsPath);
    const b = client(db.urls.wsPath);
    const ta = await a.transaction("deferred");
    await ta.execute("SELECT count(*) FROM t"); // a's snapshot
    await b.execute(onLoop); // committed after it
    await expect(ta.execute(offLoop)).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_BUSY/) });
    ta.close();
  });
});
