import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken, setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
const config = () => `/v1/organizations/${db.org}/databases/${db.name}/configuration`;

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  await createClient({ url: db.urls.httpPath, authToken: db.token }).execute("CREATE TABLE t (b BLOB)");
});
afterAll(() => h.close());

describe("database configuration", () => {
  it("starts with Turso's defaults and echoes changes", async () => {
    const r = await db.user.api.get(config());
    expect(r.body).toEqual({
      size_limit: "0",
      allow_attach: false,
      block_reads: false,
      block_writes: false,
      delete_protection: false,
      allowed_ips: [],
      allowed_aws_vpc_ids: [],
    });
    // The turso CLI sends nulls for fields it doesn't change.
    const p = await db.user.api.patch(config(), {
      allow_attach: null,
      delete_protection: null,
      size_limit: null,
    });
    expect(p.body).toEqual(r.body);
  });

  it("refuses writes with BLOCKED while block_writes is on, and still serves reads", async () => {
    const c = createClient({ url: db.urls.wsPath, authToken: db.token });
    await c.execute("INSERT INTO t VALUES (x'01')");
    expect((await db.user.api.patch(config(), { block_writes: true })).body.block_writes).toBe(true);
    await expect(c.execute("INSERT INTO t VALUES (x'02')")).rejects.toMatchObject({ code: "BLOCKED" });
    await expect(c.execute("CREATE TABLE other (x)")).rejects.toMatchObject({ code: "BLOCKED" });
    expect((await c.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(1);
    await db.user.api.patch(config(), { block_writes: false });
    await c.execute("INSERT INTO t VALUES (x'02')");
    c.close();
  });

  it("refuses reads with BLOCKED while block_reads is on", async () => {
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    await db.user.api.patch(config(), { block_reads: true });
    await expect(c.execute("SELECT 1")).rejects.toMatchObject({
      code: "BLOCKED",
      message: expect.stringContaining("Operation was blocked"),
    });
    await db.user.api.patch(config(), { block_reads: false });
    await c.execute("SELECT 1");
  });

  it("stops a write that would grow the database past size_limit with SQLITE_FULL, changing nothing", async () => {
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    await c.execute("DELETE FROM t");
    expect((await db.user.api.patch(config(), { size_limit: "64kb" })).body.size_limit).toBe("64kb");
    await c.execute({ sql: "INSERT INTO t VALUES (randomblob(?))", args: [10_000n] });
    await expect(
      c.execute({ sql: "INSERT INTO t VALUES (randomblob(?))", args: [200_000n] }),
    ).rejects.toMatchObject({
      code: "SQLITE_FULL",
    });
    // Inside a batch the whole transaction goes, including the rows before the failing one.
    await expect(
      c.batch(
        [
          { sql: "INSERT INTO t VALUES (x'aa')", args: [] },
          { sql: "INSERT INTO t VALUES (randomblob(200000))", args: [] },
        ],
        "write",
      ),
    ).rejects.toMatchObject({ code: "SQLITE_FULL" });
    expect((await c.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(1);
    await db.user.api.patch(config(), { size_limit: "" });
    await c.execute("INSERT INTO t VALUES (randomblob(200000))");
    expect((await db.user.api.get(config())).body.size_limit).toBe("0");
  });

  it("refuses an invalid size_limit", async () => {
    const r = await db.user.api.patch(config(), { size_limit: "huge" });
    expect(r.status).toBe(400);
    expect((await db.user.api.patch(config(), { block_writes: "yes" })).status).toBe(400);
  });

  it("lets a token that grants it ATTACH a database that allows it, read-only", async () => {
    const other = await setupDatabase(h, { user: db.user });
    await createClient({ url: other.urls.httpPath, authToken: other.token }).executeMultiple(
      "CREATE TABLE shared (v TEXT); INSERT INTO shared VALUES ('hello');",
    );
    const granted = await mintToken(db.user, db.org, db.name, "", {
      permissions: { read_attach: { databases: [other.name] } },
    });

    const c = createClient({ url: db.urls.httpPath, authToken: granted });
    await expect(c.execute(`ATTACH '${other.name}' AS o`)).rejects.toMatchObject({ code: "FORBIDDEN" });
    await db.user.api.patch(`/v1/organizations/${db.org}/databases/${other.name}/configuration`, {
      allow_attach: true,
    });

    const tx = await c.transaction("read");
    await tx.execute(`ATTACH '${other.name}' AS o`);
    expect((await tx.execute("SELECT v FROM o.shared")).rows[0]!.v).toBe("hello");
    await expect(tx.execute("INSERT INTO o.shared VALUES ('no')")).rejects.toMatchObject({
      code: "SQLITE_READONLY",
    });
    tx.close();

    const plain = createClient({ url: db.urls.httpPath, authToken: db.token });
    await expect(plain.execute(`ATTACH '${other.name}' AS o`)).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(plain.execute("ATTACH '/etc/passwd' AS p")).rejects.toMatchObject({
      code: "SQLITE_UNKNOWN",
    });
    await expect(plain.execute("VACUUM INTO '/tmp/stolen.db'")).rejects.toMatchObject({
      code: "SQL_PARSE_ERROR",
    });
  });

  it("protects a database from deletion while delete_protection is on", async () => {
    await db.user.api.patch(config(), { delete_protection: true });
    const del = await db.user.api.delete(`/v1/organizations/${db.org}/databases/${db.name}`);
    expect(del.status).toBe(400);
    expect(del.body.error).toMatch(/protected/);
    const grp = await db.user.api.delete(`/v1/organizations/${db.org}/groups/default`);
    expect(grp.status).toBe(400);
    await db.user.api.patch(config(), { delete_protection: false });
  });

  it("keeps server-managed PRAGMAs out of clients' reach", async () => {
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    for (const p of [
      "PRAGMA busy_timeout = 100000",
      "PRAGMA journal_mode = DELETE",
      "PRAGMA max_page_count = 1",
      "PRAGMA wal_checkpoint(TRUNCATE)",
    ]) {
      await expect(c.execute(p), p).rejects.toMatchObject({ code: "SQL_PARSE_ERROR" });
    }
    expect((await c.execute("PRAGMA journal_mode")).rows[0]![0]).toBe("wal");
    await c.execute("PRAGMA foreign_keys = ON");
  });
});
