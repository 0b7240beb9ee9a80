/**
 * What a statement does to which tables, read off its compiled program (statement-tables.ts):
 * the ground truth table-level token permissions are checked against.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostedDatabases } from "../../src/engine/hosted-databases.js";
import { InstanceFiles } from "../../src/engine/instance-files.js";
import { splitStatements } from "../../src/engine/sql-lexer.js";
import { SchemaMovedError } from "../../src/engine/sqlite-errors.js";
import { statementTables } from "../../src/engine/statement-tables.js";

const SCHEMA = `
  CREATE TABLE c (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT UNIQUE);
  CREATE TABLE s (id INTEGER PRIMARY KEY, v TEXT);
  CREATE INDEX s_v ON s (v);
  CREATE TABLE w (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID;
  CREATE TABLE log (x);
  CREATE TABLE p (id INTEGER PRIMARY KEY);
  CREATE TABLE ch (id INTEGER PRIMARY KEY, pid INT REFERENCES p (id) ON DELETE CASCADE);
  CREATE TABLE u (id INTEGER PRIMARY KEY, e TEXT UNIQUE ON CONFLICT REPLACE);
  CREATE VIEW sv AS SELECT * FROM s;
  CREATE VIRTUAL TABLE f USING fts5 (x);
  CREATE TABLE "Äv" (x);
  CREATE TABLE "äv" (x);
  CREATE TRIGGER tr AFTER INSERT ON c BEGIN
    INSERT INTO log VALUES (new.body); UPDATE s SET v = 'x' WHERE id = 1; DELETE FROM w WHERE k = 'a';
  END;`;

describe("the tables a statement uses", () => {
  const db = new Database(":memory:");
  db.exec(`PRAGMA foreign_keys = ON; ${SCHEMA}`);
  const uses = (sql: string) => {
    const r = statementTables(db, splitStatements(sql)[0]!, () => {});
    return r.beyond ?? r.uses.map((u) => `${u.action}:${u.table}`).sort();
  };

  it.each([
    ["SELECT * FROM sv WHERE v = 'a'", ["data_read:s"]],
    ["WITH q AS (SELECT id FROM s) INSERT INTO log SELECT id FROM q", ["data_add:log", "data_read:s"]],
    ["SELECT (SELECT count(*) FROM log), v FROM s", ["data_read:log", "data_read:s"]],
    ["SELECT name FROM sqlite_schema", []],
    ["INSERT INTO c (body) VALUES ('a')", ["data_add:c", "data_add:log", "data_delete:w", "data_update:s"]],
    [
      "INSERT INTO c (body) VALUES ('a') ON CONFLICT (body) DO UPDATE SET body = 'b'",
      expect.arrayContaining(["data_add:c", "data_update:c"]),
    ],
    ["REPLACE INTO s VALUES (1, 'a')", ["data_add:s", "data_update:s"]],
    // u's UNIQUE ... ON CONFLICT REPLACE makes a plain insert one that may overwrite.
    ["INSERT INTO u (e) VALUES ('a')", ["data_add:u", "data_delete:u", "data_update:u"]],
    ["UPDATE s SET v = 'q' WHERE id = 2 RETURNING v", ["data_read:s", "data_update:s"]],
    ["UPDATE s SET id = id + 100 WHERE id = 1", ["data_update:s"]],
    ["DELETE FROM s", ["data_delete:s"]],
    ["INSERT INTO w VALUES ('a', 'b')", ["data_add:w"]],
    ["UPDATE w SET v = 'c' WHERE k = 'a'", ["data_update:w"]],
    ["DELETE FROM w WHERE k = 'a'", ["data_delete:w"]],
    ["INSERT INTO ch VALUES (1, 1)", ["data_add:ch", "data_read:p"]],
    ["DELETE FROM p WHERE id = 1", ["data_delete:ch", "data_delete:p", "data_read:ch", "data_read:p"]],
    ["CREATE TABLE z AS SELECT * FROM p", ["data_read:p", "schema_add:z"]],
    ['CREATE TABLE IF NOT EXISTS "Mixed Case" (a)', ["schema_add:mixed case"]],
    ["CREATE INDEX ix ON ch (pid)", ["schema_update:ch"]],
    // A trigger runs with the rights of whoever fires it: creating one needs every data right.
    [
      "CREATE TRIGGER t2 AFTER DELETE ON main.p BEGIN SELECT 1; END",
      ["data_add:*", "data_delete:*", "data_read:*", "data_update:*", "schema_update:p"],
    ],
    ["DROP INDEX s_v", ["schema_update:s"]],
    ["DROP TRIGGER tr", ["schema_update:c"]],
    ["DROP TABLE ch", ["schema_delete:ch"]],
    ["DROP VIEW sv", ["schema_delete:sv"]],
    ["ALTER TABLE p ADD COLUMN q", ["schema_update:p"]],
    ["PRAGMA user_version = 3", ["schema_update:*"]],
    ["PRAGMA table_info(s)", []],
    ["VACUUM", ["schema_update:*"]],
    ["SELECT * FROM json_each('[1]')", ["data_read:*"]],
    ["EXPLAIN SELECT * FROM s", []],
    ["PRAGMA optimize", ["schema_update:*"]],
    ["PRAGMA integrity_check", ["data_read:*"]],
    ["PRAGMA foreign_key_check(s)", ["data_read:*"]],
    ["ALTER TABLE ch RENAME COLUMN pid TO parent", ["schema_update:ch"]],
    ["ALTER TABLE ch RENAME TO ch2", ["schema_add:ch2", "schema_delete:ch", "schema_update:ch"]],
    // Comments and quoting never hide a keyword (what a red-team review got through at first).
    ["DROP/**/TABLE s", ["schema_delete:s"]],
    ["CREATE/**/TABLE evil (x)", ["schema_add:evil"]],
    ["CREATE /*x*/ TABLE evil AS SELECT * FROM s", ["data_read:s", "schema_add:evil"]],
    ["CREATE VIRTUAL/**/TABLE evil USING fts5 (x)", ["schema_add:evil"]],
    ["ALTER/**/TABLE p ADD COLUMN evil", ["schema_update:p"]],
    ["CREATE INDEX ix2 /* ON c */ ON s (v)", ["schema_update:s"]],
    ["INSERT /**/ OR REPLACE INTO s (id, v) VALUES (1, 'p2')", ["data_add:s", "data_update:s"]],
    ["WITH x AS (SELECT 1) REPLACE INTO s VALUES (1, 'a')", ["data_add:s", "data_update:s"]],
    ["INSERT /**/ OR REPLACE INTO w VALUES ('k', 'r2')", ["data_add:w", "data_update:w"]],
    ["WITH x AS (SELECT 'a) insert') UPDATE w SET v = 'u1'", ["data_update:w"]],
    ["UPDATE OR REPLACE s SET id = 1 WHERE id = 2", ["data_delete:s", "data_update:s"]],
    // Renaming gives up the old name and takes the new one.
    ["ALTER TABLE s RENAME TO loot", ["schema_add:loot", "schema_delete:s", "schema_update:s"]],
    ["ALTER TABLE ch ADD COLUMN z INT CHECK (z > 0)", ["schema_update:ch"]],
    ["REINDEX s", ["schema_update:s"]],
    ["ANALYZE s_v", ["schema_update:s"]],
    ['DROP INDEX "nope"', expect.stringMatching(/doesn't name/)],
    ["CREATE VIEW bv AS SELECT x'ff80' AS b", expect.stringMatching(/blob literal/)],
    // SQLite folds ASCII letters only: "Äv" and "äv" are two tables.
    ['DELETE FROM "Äv"', ["data_delete:Äv"]],
    ['INSERT INTO "äv" VALUES (1)', ["data_add:äv"]],
    // An outer OR REPLACE applies inside the triggers it fires.
    [
      "INSERT OR REPLACE INTO c (id, body) VALUES (60, 'x')",
      expect.arrayContaining(["data_add:log", "data_update:log", "data_update:c"]),
    ],
    ["SELECT * FROM temp.sqlite_master", expect.stringMatching(/database other than main/)],
    ["CREATE TEMP TABLE tt (a)", expect.stringMatching(/temporary schema/)],
  ])("%s", (sql, expected) => {
    expect(uses(sql)).toEqual(expected);
  });
});

describe("a read checked on its program", () => {
  let dir: string;
  let hosted: HostedDatabases;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "shoal-tables-"));
    const files = new InstanceFiles(dir);
    files.create("loc", "00000000-0000-4000-8000-000000000002");
    file = files.path("loc", "00000000-0000-4000-8000-000000000002");
    hosted = new HostedDatabases({ maxOpen: 8, synchronous: "NORMAL" }, files);
  });
  afterAll(async () => {
    await hosted.closeAll();
    await rm(dir, { recursive: true, force: true });
  });

  it("fails when the schema changes before it runs off the event loop, as SQLite compiles it again", async () => {
    const db = hosted.at(file);
    const [reader, writer] = [db.checkout(), db.checkout()];
    await writer.execute(writer.prepare("CREATE TABLE t (x)"), [], { wantRows: false });
    // The driver can't read this program's listing with an FTS5 table around: it isn't read.
    await writer.execute(writer.prepare("CREATE VIRTUAL TABLE f USING fts5 (x)"), [], { wantRows: false });
    const check = reader.prepare("PRAGMA integrity_check");
    expect((await reader.execute(check, [], { wantRows: true })).rows).toEqual([["ok"]]);
    const read = reader.prepare("SELECT count(*) FROM t");
    expect(read.bounded).toBe(false);
    const checked = reader.execute(read, [], { wantRows: true, checkedProgram: true });
    const ddl = writer.execute(writer.prepare("CREATE TABLE t2 (x)"), [], { wantRows: false });
    await expect(checked).rejects.toBeInstanceOf(SchemaMovedError);
    await ddl;
    // Unchecked, or with nothing changing meanwhile, it runs.
    expect((await reader.execute(read, [], { wantRows: true, checkedProgram: true })).rows).toEqual([[0n]]);
    const plain = reader.execute(read, [], { wantRows: true });
    const ddl2 = writer.execute(writer.prepare("CREATE TABLE t3 (x)"), [], { wantRows: false });
    expect((await plain).rows).toEqual([[0n]]);
    await ddl2;
    db.checkin(reader);
    db.checkin(writer);
  });
});
