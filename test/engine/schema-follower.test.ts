/**
 * How a pooled connection keeps its view of the schema current (engine/schema-follower.ts): it
 * reads the schema version only after a statement that may have changed it ran on one of the
 * process's connections to the database, and a change made by another program is caught when a
 * statement fails to compile.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EngineConnection } from "../../src/engine/connection.js";
import { HostedDatabases } from "../../src/engine/hosted-databases.js";
import { InstanceFiles } from "../../src/engine/instance-files.js";

const ID = "00000000-0000-4000-8000-000000000001";
let dir: string;
let hosted: HostedDatabases;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-schema-"));
  const files = new InstanceFiles(dir);
  files.create("loc", ID);
  file = files.path("loc", ID);
  hosted = new HostedDatabases({ maxOpen: 8, synchronous: "NORMAL" }, files);
});
afterEach(async () => {
  await hosted.closeAll();
  await rm(dir, { recursive: true, force: true });
});

/** Runs one statement as a stream would (DDL runs off the event loop, so this is awaited). */
function run(conn: EngineConnection, sql: string, args: bigint[] = []) {
  return Promise.resolve(conn.execute(conn.prepare(sql), args, { wantRows: true }));
}

/** How many times the connection ran its schema-version read (SQLite's own count, `sqlite_stmt.run`). */
function versionReads(conn: EngineConnection): number {
  const [row] = [
    ...conn.rows("SELECT coalesce(sum(run), 0) FROM sqlite_stmt WHERE sql = 'PRAGMA schema_version'"),
  ];
  return Number(row?.[0] ?? 0);
}

describe("a connection's view of the schema", () => {
  it("sees another connection's change in a statement it had cached, with no failed compile to tell it", async () => {
    const db = hosted.at(file);
    const a = db.checkout();
    const b = db.checkout();
    await run(a, "CREATE TABLE t (x)");
    await run(a, "INSERT INTO t VALUES (1)");
    expect((await run(b, "SELECT * FROM t")).columns.map((c) => c.name)).toEqual(["x"]);
    await run(a, "ALTER TABLE t ADD COLUMN y");
    const after = await run(b, "SELECT * FROM t");
    expect(after.columns.map((c) => c.name)).toEqual(["x", "y"]);
    expect(after.rows).toEqual([[1n, null]]);
    db.checkin(a);
    db.checkin(b);
  });

  it("reads the version once, not before every statement, while only rows change", async () => {
    const db = hosted.at(file);
    const conn = db.checkout();
    await run(conn, "CREATE TABLE log (v)");
    const before = versionReads(conn);
    for (let i = 0; i < 50; i++) {
      await run(conn, "INSERT INTO log VALUES (?)", [BigInt(i)]);
      await run(conn, "SELECT count(*) FROM log");
    }
    // The first statement after the CREATE reads it; nothing after that may have moved it.
    expect(versionReads(conn) - before).toBe(1);
    await run(conn, "CREATE INDEX log_v ON log (v)");
    await run(conn, "SELECT count(*) FROM log");
    expect(versionReads(conn) - before).toBe(2);
    db.checkin(conn);
  });

  it("catches a change another program made when a statement no longer compiles against the old schema", async () => {
    const db = hosted.at(file);
    const conn = db.checkout();
    await run(conn, "CREATE TABLE t (a)");
    await run(conn, "SELECT * FROM t");
    const other = new Database(file);
    other.exec("DROP TABLE t; CREATE TABLE t (a, b)");
    other.close();
    // Compiled against t(a) this fails with "table t has 1 columns"; it is compiled again after a read.
    expect((await run(conn, "INSERT INTO t VALUES (1, 2)")).affectedRowCount).toBe(1);
    expect((await run(conn, "SELECT * FROM t")).columns.map((c) => c.name)).toEqual(["a", "b"]);
    db.checkin(conn);
  });
});
