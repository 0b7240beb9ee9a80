import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DumpFiles, DumpTooLargeError } from "../../src/engine/dump-files.js";
import { DumpError, importDump } from "../../src/engine/dump-import.js";
import { flushClosing } from "../../src/engine/handle-release.js";
import { createWithSchema, type SchemaObject, schemaFingerprint } from "../../src/engine/schema-copy.js";
import { checkUploadHeader, UploadRejectedError } from "../../src/engine/upload-check.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-seed-"));
});
afterEach(async () => {
  await flushClosing();
  await rm(dir, { recursive: true, force: true });
});

function rows(file: string, sql: string): unknown[][] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).raw(true).all() as unknown[][];
  } finally {
    db.close();
  }
}

const DUMP = `PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT);
INSERT INTO t VALUES(1,'semi;colon');
INSERT INTO t VALUES(2,'it''s');
CREATE TABLE log (msg TEXT);
CREATE TRIGGER t_ins AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('added'); INSERT INTO log VALUES ('twice'); END;
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('t',2);
COMMIT;
`;

describe("loading a SQL dump", () => {
  it("runs sqlite3's .dump format, triggers and quoted semicolons included, into a WAL database", () => {
    const file = path.join(dir, "a.db");
    expect(importDump(DUMP, file, 0).statements).toBe(10);
    expect(rows(file, "SELECT id, v FROM t ORDER BY id")).toEqual([
      [1, "semi;colon"],
      [2, "it's"],
    ]);
    expect(rows(file, "SELECT name FROM sqlite_schema WHERE type = 'trigger'")).toEqual([["t_ins"]]);
    expect(rows(file, "PRAGMA journal_mode")).toEqual([["wal"]]);
    expect(readFileSync(file).readUInt16BE(16)).toBe(4096);
  });

  it("refuses statements that reach outside the new database, leaving no file", () => {
    for (const bad of [
      "ATTACH DATABASE '/tmp/x.db' AS x;",
      `VACUUM INTO '${path.join(dir, "copy.db")}';`,
      "PRAGMA journal_mode = DELETE;",
      "PRAGMA temp_store_directory = '/tmp';",
    ]) {
      const file = path.join(dir, "bad.db");
      expect(() => importDump(`CREATE TABLE t (v);\n${bad}`, file, 0)).toThrow(
        /statement 2 .*not allowed in a dump/,
      );
      expect(existsSync(file)).toBe(false);
    }
    expect(existsSync(path.join(dir, "copy.db"))).toBe(false);
  });

  it("refuses an ATTACH hidden after a trigger whose body uses begin and end as names, creating no file", () => {
    const evil = path.join(dir, "evil.db");
    const dump = [
      "BEGIN;",
      "CREATE TABLE b (x);",
      "CREATE TRIGGER t AFTER INSERT ON b BEGIN SELECT 1 AS begin; END;",
      `ATTACH DATABASE '${evil}' AS y;`,
      "CREATE TABLE y.pwn (z);",
      "COMMIT;",
    ].join("\n");
    const file = path.join(dir, "hidden.db");
    expect(() => importDump(dump, file, 0)).toThrow(/statement 4 .*ATTACH and DETACH are not allowed/);
    expect(existsSync(evil)).toBe(false);
    expect(existsSync(file)).toBe(false);
  });

  it("stops at the first failing statement, says which, and keeps nothing", () => {
    const file = path.join(dir, "fail.db");
    const dump = "BEGIN;\nCREATE TABLE t (v);\nINSERT INTO missing VALUES (1);\nCOMMIT;";
    expect(() => importDump(dump, file, 0)).toThrow(DumpError);
    expect(() => importDump(dump, file, 0)).toThrow(
      /statement 3 \(INSERT INTO missing VALUES \(1\)\) failed: no such table/,
    );
    expect(existsSync(file)).toBe(false);
  });

  it("refuses a dump that ends inside its transaction", () => {
    const file = path.join(dir, "open.db");
    expect(() => importDump("BEGIN; CREATE TABLE t (v);", file, 0)).toThrow(/BEGIN without COMMIT/);
    expect(existsSync(file)).toBe(false);
  });

  it("fails a dump larger than the size limit instead of creating an oversized database", () => {
    const file = path.join(dir, "big.db");
    const dump = `CREATE TABLE t (v);\nINSERT INTO t VALUES (zeroblob(100000));`;
    expect(() => importDump(dump, file, 4)).toThrow(/larger than the database's size limit/);
    expect(existsSync(file)).toBe(false);
  });
});

describe("copying a schema", () => {
  it("creates the same tables, indexes, views, triggers and virtual tables with no rows", () => {
    const src = path.join(dir, "src.db");
    const db = new Database(src);
    db.exec(`CREATE TABLE a (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT UNIQUE);
      CREATE INDEX a_v ON a (v);
      CREATE VIEW av AS SELECT v FROM a;
      CREATE TABLE audit (v);
      CREATE TRIGGER a_t AFTER INSERT ON a BEGIN INSERT INTO audit VALUES (new.v); END;
      CREATE VIRTUAL TABLE docs USING fts5(body);
      INSERT INTO a (v) VALUES ('row');`);
    const objects = (
      db
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid")
        .raw(true)
        .all() as string[][]
    ).map(([type, name, tblName, sql]) => ({ type, name, tblName, sql }) as SchemaObject);
    db.close();
    const dest = path.join(dir, "dest.db");
    createWithSchema(dest, objects);
    const copied = (
      rows(dest, "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid") as string[][]
    ).map(([type, name, tblName, sql]) => ({ type, name, tblName, sql }) as SchemaObject);
    expect(schemaFingerprint(copied)).toBe(schemaFingerprint(objects));
    expect(rows(dest, "SELECT count(*) FROM a")).toEqual([[0]]);
  });
});

describe("checking an uploaded database file", () => {
  function made(setup: string, name: string): string {
    const file = path.join(dir, name);
    const db = new Database(file);
    db.exec(setup);
    db.close();
    return file;
  }

  it("accepts a 4 KiB-page UTF-8 database without auto-vacuum", () => {
    const file = made("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE t (v);", "ok.db");
    expect(() => checkUploadHeader(file)).not.toThrow();
  });

  it("refuses other page sizes, auto-vacuum, UTF-16, cut files and files that aren't SQLite, saying how to fix them", () => {
    const cases: Array<[string, RegExp]> = [
      [made("PRAGMA page_size = 8192; CREATE TABLE t (v);", "p.db"), /8192-byte pages and must use 4096/],
      [made("PRAGMA auto_vacuum = FULL; CREATE TABLE t (v);", "v.db"), /auto-vacuum off/],
      [made("PRAGMA encoding = 'UTF-16le'; CREATE TABLE t (v);", "e.db"), /UTF-8/],
    ];
    for (const [file, message] of cases) expect(() => checkUploadHeader(file)).toThrow(message);
    const cut = made("CREATE TABLE t (v); INSERT INTO t VALUES (zeroblob(20000));", "cut.db");
    writeFileSync(cut, readFileSync(cut).subarray(0, 8192));
    expect(() => checkUploadHeader(cut)).toThrow(/header says/);
    const text = path.join(dir, "dump.sql");
    writeFileSync(text, "PRAGMA foreign_keys=OFF;\n".repeat(20));
    expect(() => checkUploadHeader(text)).toThrow(UploadRejectedError);
  });
});

describe("dump files", () => {
  async function* bytes(...parts: string[]) {
    for (const p of parts) yield Buffer.from(p);
  }

  it("keeps an upload until it expires, then deletes it", async () => {
    const files = new DumpFiles(path.join(dir, "dumps"), 1000);
    const info = await files.save("org-1", bytes("CREATE TABLE t (v);", "\n"), 1024, 5000);
    expect(info).toMatchObject({ orgId: "org-1", bytes: 20, expiresAt: 6000 });
    expect(files.find(info.id, 5999)?.id).toBe(info.id);
    expect(files.text(info.id)).toBe("CREATE TABLE t (v);\n");
    expect(files.pendingBytes("org-1", 5999)).toBe(20);
    expect(files.sweep(6000)).toBe(1);
    expect(files.find(info.id, 5000)).toBeUndefined();
  });

  it("refuses an upload past the limit, keeping nothing of it", async () => {
    const files = new DumpFiles(path.join(dir, "dumps"));
    await expect(files.save("org-1", bytes("x".repeat(600), "y".repeat(600)), 1000)).rejects.toBeInstanceOf(
      DumpTooLargeError,
    );
    expect(readdirSync(path.join(dir, "dumps"))).toEqual([]);
  });

  it("never resolves a malformed id to a file", () => {
    const files = new DumpFiles(path.join(dir, "dumps"));
    expect(files.find("../../etc/passwd")).toBeUndefined();
  });
});
