/**
 * A database whose file is damaged (here: garbage written over its pages with node's fs, as a
 * failing disk or a stray tool would) answers clear errors, never a 500: on the data plane, when
 * branched, after a restart, and a point-in-time restore from before the damage gets the data back.
 */
import { randomBytes } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";
import { createClient, LibsqlError } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipeline, setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { instanceFile } from "../helpers/files.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;

beforeAll(async () => {
  h = await startTestShoal();
});
afterAll(() => h.close());

const PAGE = 4096;

/** A database with a table spread over many pages, and the time just after it was written. */
async function filledDatabase(): Promise<{ db: TestDatabase; writtenAt: string }> {
  const db = await setupDatabase(h);
  const r = await pipeline(db.urls.httpPath, db.token, {
    requests: [
      sql("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)"),
      sql("INSERT INTO t (v) SELECT randomblob(3000) FROM generate_series(1, 40)"),
      { type: "close" },
    ],
  });
  expect(r.body.results.map((x: any) => x.type)).toEqual(["ok", "ok", "ok"]);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  return { db, writtenAt: new Date(Date.now() - 500).toISOString() };
}

/** Stops Shoal, writes garbage over pages `[first, first + count)` (1-based), starts it again. */
async function damage(db: TestDatabase, first: number, count: number): Promise<void> {
  await h.shoal.close();
  const fd = openSync(instanceFile(h.dataDir, "aws-us-east-1", db.id), "r+");
  try {
    writeSync(fd, randomBytes(PAGE * count), 0, PAGE * count, PAGE * (first - 1));
  } finally {
    closeSync(fd);
  }
  await h.restart();
}

describe.each([
  { what: "garbage over its data pages", first: 2, count: 6, code: "SQLITE_CORRUPT" },
  { what: "garbage over its header page", first: 1, count: 1, code: "SQLITE_NOTADB" },
])("a database file with $what", ({ first, count, code }) => {
  let db: TestDatabase;
  let writtenAt: string;

  beforeAll(async () => {
    ({ db, writtenAt } = await filledDatabase());
    await damage(db, first, count);
  });

  it("answers its statements with a SQLite error code saying the file is damaged, over HTTP and WebSocket", async () => {
    const r = await pipeline(db.urls.httpPath, db.token, { requests: [sql("SELECT count(*) FROM t")] });
    expect(r.status).toBe(200);
    expect(r.body.results[0]).toMatchObject({
      type: "error",
      error: {
        code,
        message: expect.stringMatching(/database file is damaged.*seed type database with a timestamp/),
      },
    });
    const client = createClient({ url: db.urls.wsPath, authToken: db.token });
    const failed = await client.execute("SELECT count(*) FROM t").catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(LibsqlError);
    expect((failed as LibsqlError).code).toBe(code);
    expect((failed as LibsqlError).message).toMatch(/damaged/);
    client.close();
  });

  it("refuses to be branched with a 409 saying why, and stays damaged after another restart", async () => {
    const branch = await db.user.api.post(`/v1/organizations/${db.org}/databases`, {
      name: `${db.name}-br`,
      group: "default",
      seed: { type: "database", name: db.name },
    });
    expect(branch.status, branch.text).toBe(409);
    expect(branch.body.error).toMatch(
      new RegExp(`database ${db.name} can't be copied: the database file is damaged`),
    );
    await h.restart();
    const r = await pipeline(db.urls.httpPath, db.token, { requests: [sql("SELECT 1 FROM t")] });
    expect(r.body.results[0].error.code).toBe(code);
    // Other databases are untouched by it.
    const other = await setupDatabase(h, { user: db.user });
    const ok = await pipeline(other.urls.httpPath, other.token, { requests: [sql("SELECT 1")] });
    expect(ok.body.results[0].type).toBe("ok");
  });

  it("can be restored from a point in time before the damage, as the message advises", async () => {
    const restored = await db.user.api.post(`/v1/organizations/${db.org}/databases`, {
      name: `${db.name}-back`,
      group: "default",
      seed: { type: "database", name: db.name, timestamp: writtenAt },
    });
    expect(restored.status, restored.text).toBe(200);
    const token = (
      await db.user.api.post(`/v1/organizations/${db.org}/databases/${db.name}-back/auth/tokens`)
    ).body.jwt;
    const r = await pipeline(`${h.url}/db/${db.org}/${db.name}-back/`, token, {
      requests: [sql("SELECT count(*) FROM t")],
    });
    expect(r.body.results[0].response.result.rows[0][0]).toEqual({ type: "integer", value: "40" });
  });
});
