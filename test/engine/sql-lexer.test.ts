import { describe, expect, it } from "vitest";
import type { StatementKind } from "../../src/engine/sql-lexer.js";
import { classifyStatement, splitStatements } from "../../src/engine/sql-lexer.js";
import { statementParameters } from "../../src/engine/sql-params.js";

const texts = (sql: string) => splitStatements(sql).map((s) => s.sql);

describe("splitStatements", () => {
  it("splits on semicolons and trims whitespace around each statement", () => {
    expect(texts("  SELECT 1 ;\n\tSELECT 2;SELECT 3  ")).toEqual(["SELECT 1", "SELECT 2", "SELECT 3"]);
  });

  it("keeps semicolons inside string literals, including escaped quotes", () => {
    expect(texts("SELECT 'a;b'; SELECT 'it''s; fine'; SELECT 3")).toEqual([
      "SELECT 'a;b'",
      "SELECT 'it''s; fine'",
      "SELECT 3",
    ]);
  });

  it("keeps semicolons inside double-quoted, backtick and bracket identifiers", () => {
    const sql = 'SELECT "a;""b" FROM t; SELECT `c;``d` FROM t; SELECT [e;f] FROM t; SELECT 4';
    expect(texts(sql)).toEqual([
      'SELECT "a;""b" FROM t',
      "SELECT `c;``d` FROM t",
      "SELECT [e;f] FROM t",
      "SELECT 4",
    ]);
  });

  it("ends a bracket identifier at the first closing bracket, since brackets have no escape", () => {
    expect(texts("SELECT [a]];SELECT 2")).toEqual(["SELECT [a]]", "SELECT 2"]);
  });

  it("keeps semicolons inside blob literals", () => {
    expect(texts("SELECT x';'; SELECT X'00;'")).toEqual(["SELECT x';'", "SELECT X'00;'"]);
  });

  it("ignores semicolons inside line and block comments but keeps comments inside a statement", () => {
    const sql = "SELECT 1 -- not; the end\n + 1; SELECT /* a; b */ 2";
    expect(texts(sql)).toEqual(["SELECT 1 -- not; the end\n + 1", "SELECT /* a; b */ 2"]);
  });

  it("trims comments before and after a statement", () => {
    const sql = "-- leading\n/* block */ SELECT 1 /* trailing */ -- more\n; /* x */ SELECT 2 -- end";
    expect(texts(sql)).toEqual(["SELECT 1", "SELECT 2"]);
  });

  it("drops empty statements made of leading, trailing and repeated semicolons", () => {
    expect(texts(";; SELECT 1;;; ; SELECT 2;;")).toEqual(["SELECT 1", "SELECT 2"]);
  });

  it("returns no statements for empty, blank, comment-only and semicolon-only input", () => {
    expect(splitStatements("")).toEqual([]);
    expect(splitStatements("  \n\t ")).toEqual([]);
    expect(splitStatements("-- just a comment")).toEqual([]);
    expect(splitStatements("/* a */ -- b\n ; /* c */ ;")).toEqual([]);
    expect(splitStatements(";;;")).toEqual([]);
  });

  it("lets an unterminated block comment run to the end of the input", () => {
    expect(texts("SELECT 1; /* SELECT 2; SELECT 3")).toEqual(["SELECT 1"]);
  });

  it("returns an unterminated string or identifier as the final statement instead of throwing", () => {
    expect(texts("SELECT 1; SELECT 'abc; def")).toEqual(["SELECT 1", "SELECT 'abc; def"]);
    expect(texts('SELECT "abc; def')).toEqual(['SELECT "abc; def']);
    expect(texts("SELECT [abc; def")).toEqual(["SELECT [abc; def"]);
    expect(splitStatements("SELECT 'x")[0]?.kind).toBe("read");
  });

  it("keeps a CREATE TRIGGER body with several statements and a CASE ... END as one statement", () => {
    const trigger = [
      "CREATE TRIGGER audit AFTER INSERT ON t BEGIN",
      "  INSERT INTO log VALUES (new.id, 'inserted; really');",
      "  UPDATE t SET tag = CASE WHEN new.id > 10 THEN 'big' ELSE 'small' END WHERE id = new.id;",
      "  DELETE FROM old_log WHERE ts < 5;",
      "END",
    ].join("\n");
    const out = splitStatements(`${trigger}; INSERT INTO t VALUES (1); SELECT 2`);
    expect(out.map((s) => s.sql)).toEqual([trigger, "INSERT INTO t VALUES (1)", "SELECT 2"]);
    expect(out.map((s) => s.kind)).toEqual(["write", "write", "read"]);
    expect(out[0]?.isDml).toBe(false);
  });

  it("handles TEMP triggers, a CASE in the WHEN clause and a column named end", () => {
    const trigger =
      "CREATE TEMP TRIGGER IF NOT EXISTS tr BEFORE UPDATE ON t " +
      "WHEN CASE new.x WHEN 1 THEN 1 ELSE 0 END BEGIN SELECT new.end; SELECT RAISE(ABORT, 'no;'); END";
    expect(texts(`${trigger};SELECT 1`)).toEqual([trigger, "SELECT 1"]);
    const temporary = "create temporary trigger tr after delete on t begin delete from u; end";
    expect(texts(`${temporary}; select 1`)).toEqual([temporary, "select 1"]);
  });

  it("ends a trigger at its first `; END`, whatever columns or aliases named begin, case or end it holds", () => {
    const trigger =
      "CREATE TRIGGER t AFTER INSERT ON b BEGIN SELECT 1 AS begin; SELECT 2 AS case_; SELECT x AS end FROM b; END";
    expect(texts(`${trigger}; ATTACH DATABASE '/tmp/evil.db' AS y; CREATE TABLE y.pwn (z); END;`)).toEqual([
      trigger,
      "ATTACH DATABASE '/tmp/evil.db' AS y",
      "CREATE TABLE y.pwn (z)",
      "END",
    ]);
    expect(splitStatements(`${trigger}; ATTACH DATABASE 'x' AS y`)[1]?.kind).toBe("attach");
  });

  it("does not treat CREATE TABLE or a trigger-like word elsewhere as a trigger body", () => {
    expect(texts("CREATE TABLE trigger_begin (a); BEGIN; SELECT 'END'; COMMIT")).toEqual([
      "CREATE TABLE trigger_begin (a)",
      "BEGIN",
      "SELECT 'END'",
      "COMMIT",
    ]);
  });

  it("treats non-ASCII letters as part of identifiers", () => {
    expect(texts("SELECT café FROM naïve; SELECT 2")).toEqual(["SELECT café FROM naïve", "SELECT 2"]);
  });

  it("classifies every statement it returns", () => {
    const out = splitStatements("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); SELECT * FROM t; COMMIT");
    expect(out.map((s) => [s.kind, s.beginMode, s.isDml, s.isInsert])).toEqual([
      ["begin", "immediate", false, false],
      ["write", undefined, true, true],
      ["read", undefined, false, false],
      ["commit", undefined, false, false],
    ]);
  });
});

describe("classifyStatement", () => {
  const kinds: Array<[string, StatementKind]> = [
    ["SELECT 1", "read"],
    ["select * from t", "read"],
    ["VALUES (1), (2)", "read"],
    ["INSERT INTO t VALUES (1)", "write"],
    ["UPDATE t SET a = 1", "write"],
    ["DELETE FROM t", "write"],
    ["REPLACE INTO t VALUES (1)", "write"],
    ["CREATE TABLE t (a)", "write"],
    ["CREATE INDEX i ON t (a)", "write"],
    ["DROP TABLE t", "write"],
    ["ALTER TABLE t ADD COLUMN b", "write"],
    ["REINDEX", "write"],
    ["VACUUM", "write"],
    ["ANALYZE", "write"],
    ["BEGIN", "begin"],
    ["COMMIT", "commit"],
    ["COMMIT TRANSACTION", "commit"],
    ["END", "commit"],
    ["END TRANSACTION", "commit"],
    ["ROLLBACK", "rollback"],
    ["ROLLBACK TRANSACTION", "rollback"],
    ["ROLLBACK TO sp", "savepoint"],
    ["ROLLBACK TO SAVEPOINT sp", "savepoint"],
    ["ROLLBACK TRANSACTION TO SAVEPOINT sp", "savepoint"],
    ["SAVEPOINT sp", "savepoint"],
    ["RELEASE sp", "savepoint"],
    ["RELEASE SAVEPOINT sp", "savepoint"],
    ["ATTACH DATABASE 'x.db' AS x", "attach"],
    ["ATTACH 'x.db' AS x", "attach"],
    ["DETACH DATABASE x", "detach"],
    ["DETACH x", "detach"],
    ["FROB the database", "other"],
    ["(SELECT 1)", "other"],
    ["'select'", "other"],
  ];

  it.each(kinds)("classifies %j as %s", (sql, kind) => {
    expect(classifyStatement(sql).kind).toBe(kind);
  });

  it("marks INSERT, INSERT OR REPLACE and REPLACE as inserting DML", () => {
    for (const sql of [
      "INSERT INTO t VALUES (1)",
      "insert or replace into t values (1)",
      "REPLACE INTO t VALUES (1)",
    ]) {
      expect(classifyStatement(sql)).toMatchObject({
        kind: "write",
        isDml: true,
        isInsert: true,
        isExplain: false,
      });
    }
  });

  it("marks UPDATE and DELETE as DML that doesn't insert", () => {
    for (const sql of ["UPDATE t SET a = 1", "DELETE FROM t"]) {
      expect(classifyStatement(sql)).toMatchObject({ kind: "write", isDml: true, isInsert: false });
    }
  });

  it("does not mark schema changes or reads as DML", () => {
    for (const sql of ["CREATE TABLE t (a)", "DROP TABLE t", "SELECT 1", "VACUUM"]) {
      expect(classifyStatement(sql)).toMatchObject({ isDml: false, isInsert: false });
    }
  });

  it("returns the trimmed text without the trailing semicolon and skips leading comments", () => {
    const info = classifyStatement("  -- hello\n /* there */ insert into t values (1) ; -- bye");
    expect(info).toEqual({
      sql: "insert into t values (1)",
      kind: "write",
      isDml: true,
      isInsert: true,
      isExplain: false,
    });
  });

  it("describes only the first statement of a multi-statement text", () => {
    expect(classifyStatement(";; SELECT 1; DELETE FROM t")).toMatchObject({ sql: "SELECT 1", kind: "read" });
  });

  it("returns kind other with empty text for an empty statement", () => {
    expect(classifyStatement(" ; -- nothing")).toEqual({
      sql: "",
      kind: "other",
      isDml: false,
      isInsert: false,
      isExplain: false,
    });
  });

  it("treats EXPLAIN and EXPLAIN QUERY PLAN as reads, even of writes", () => {
    expect(classifyStatement("EXPLAIN QUERY PLAN SELECT * FROM t")).toMatchObject({
      kind: "read",
      isExplain: true,
      isDml: false,
    });
    expect(classifyStatement("explain delete from t")).toMatchObject({
      kind: "read",
      isExplain: true,
      isDml: false,
      isInsert: false,
    });
    expect(classifyStatement("SELECT 1").isExplain).toBe(false);
  });

  describe("BEGIN", () => {
    const modes: Array<[string, string]> = [
      ["BEGIN", "deferred"],
      ["BEGIN TRANSACTION", "deferred"],
      ["BEGIN DEFERRED", "deferred"],
      ["begin immediate", "immediate"],
      ["BEGIN IMMEDIATE TRANSACTION", "immediate"],
      ["BEGIN EXCLUSIVE", "exclusive"],
      ["BEGIN EXCLUSIVE TRANSACTION", "exclusive"],
      ["BEGIN TRANSACTION READONLY", "readonly"],
      ["BEGIN READONLY", "readonly"],
      ["BEGIN TRANSACTION tx_name", "deferred"],
    ];

    it.each(modes)("reads %j as mode %s", (sql, mode) => {
      expect(classifyStatement(sql)).toMatchObject({ kind: "begin", beginMode: mode });
    });

    it("leaves beginMode undefined for statements that aren't BEGIN", () => {
      expect(classifyStatement("COMMIT").beginMode).toBeUndefined();
      expect(classifyStatement("SELECT 1").beginMode).toBeUndefined();
    });
  });

  describe("WITH", () => {
    it("classifies by the statement after a single CTE", () => {
      expect(classifyStatement("WITH a AS (SELECT 1) SELECT * FROM a")).toMatchObject({
        kind: "read",
        isDml: false,
      });
      expect(classifyStatement("WITH a AS (SELECT 1) VALUES (2)").kind).toBe("read");
    });

    it("recognises DML after WITH and whether it inserts", () => {
      const insert = classifyStatement("WITH a AS (SELECT 1 AS x) INSERT INTO t SELECT x FROM a");
      expect(insert).toMatchObject({ kind: "write", isDml: true, isInsert: true });
      const replace = classifyStatement("WITH a AS (SELECT 1) REPLACE INTO t SELECT * FROM a");
      expect(replace).toMatchObject({ kind: "write", isDml: true, isInsert: true });
      const update = classifyStatement("WITH a AS (SELECT 1) UPDATE t SET x = (SELECT * FROM a)");
      expect(update).toMatchObject({ kind: "write", isDml: true, isInsert: false });
      const del = classifyStatement("with a as (select 1) delete from t where x in a");
      expect(del).toMatchObject({ kind: "write", isDml: true, isInsert: false });
    });

    it("skips CTE bodies with nested parentheses, strings and the word INSERT in a string", () => {
      const sql =
        "WITH RECURSIVE cnt(x, y) AS (SELECT 1, ')' UNION ALL SELECT (x + 1), 'INSERT (' FROM cnt WHERE x < (10)), " +
        'b AS NOT MATERIALIZED (SELECT \'delete\'), c AS MATERIALIZED (SELECT "insert" FROM (SELECT 1 AS "insert")) ' +
        "SELECT * FROM cnt, b, c";
      expect(classifyStatement(sql)).toMatchObject({ kind: "read", isDml: false, isInsert: false });
    });

    it("finds an UPDATE after several CTEs whose bodies mention other statements", () => {
      const sql = "WITH a AS (INSERT_LIKE), b(z) AS (SELECT 'INSERT INTO t') UPDATE t SET z = 1";
      expect(classifyStatement(sql)).toMatchObject({ kind: "write", isDml: true, isInsert: false });
    });

    it("returns other when WITH is followed by something it cannot classify", () => {
      expect(classifyStatement("WITH a AS (SELECT 1) CREATE TABLE x (y)").kind).toBe("other");
      expect(classifyStatement("WITH a AS (SELECT 1").kind).toBe("other");
    });
  });

  describe("PRAGMA", () => {
    const pragmas: Array<[string, StatementKind]> = [
      ["PRAGMA user_version", "read"],
      ["PRAGMA main.user_version", "read"],
      ["PRAGMA journal_mode;", "read"],
      ["PRAGMA user_version = 5", "write"],
      ["PRAGMA main.journal_mode=WAL", "write"],
      ["PRAGMA foreign_keys = ON", "write"],
      ["PRAGMA table_info(t)", "read"],
      ["pragma TABLE_INFO('t')", "read"],
      ["PRAGMA main.index_list(t)", "read"],
      ["PRAGMA integrity_check(10)", "read"],
      ['PRAGMA "foreign_key_list"(t)', "read"],
      ["PRAGMA user_version(5)", "write"],
      ["PRAGMA wal_checkpoint(TRUNCATE)", "write"],
      ["PRAGMA main.cache_size(100)", "write"],
    ];

    it.each(pragmas)("classifies %j as %s", (sql, kind) => {
      expect(classifyStatement(sql)).toMatchObject({ kind, isDml: false, isInsert: false });
    });
  });
});

describe("statementParameters", () => {
  it("numbers anonymous parameters in order", () => {
    expect(statementParameters("SELECT ?, ?, ?")).toEqual([null, null, null]);
  });

  it("gives ?NNN its fixed index, named as written, and continues anonymous numbering after it", () => {
    expect(statementParameters("SELECT ?3")).toEqual([null, null, "?3"]);
    expect(statementParameters("SELECT ?, ?3, ?")).toEqual([null, null, "?3", null]);
    expect(statementParameters("SELECT ?2, ?1, ?2")).toEqual(["?1", "?2"]);
    // sqlite3_bind_parameter_name names a slot at its first ?NNN, also after a plain ? took it.
    expect(statementParameters("SELECT ?, ?1")).toEqual(["?1"]);
    expect(statementParameters("SELECT ?, ?3, :one")).toEqual([null, null, "?3", ":one"]);
  });

  it("returns named parameters with their prefix, in order of first appearance", () => {
    expect(statementParameters("SELECT :a, @b, $c")).toEqual([":a", "@b", "$c"]);
  });

  it("lists a repeated named parameter once, keeping the index of its first appearance", () => {
    expect(statementParameters("SELECT :a, ?, :a, :b, :a")).toEqual([":a", null, ":b"]);
  });

  it("treats names as case-sensitive and prefixes as part of the name", () => {
    expect(statementParameters("SELECT :a, :A, @a")).toEqual([":a", ":A", "@a"]);
  });

  it("numbers named parameters after a ?NNN and lets a ?NNN share a named parameter's slot", () => {
    expect(statementParameters("SELECT ?2, :a")).toEqual([null, "?2", ":a"]);
    expect(statementParameters("SELECT :a, ?1, ?")).toEqual([":a", null]);
  });

  it("ignores parameter-like text inside strings, quoted identifiers and comments", () => {
    const sql = "SELECT '?', ':a', \"@b\", `$c`, [?1], x'3F' -- :d ?\n /* @e ?5 */, ? FROM t WHERE a = :f";
    expect(statementParameters(sql)).toEqual([null, ":f"]);
  });

  it("returns an empty list for a statement without parameters or an empty text", () => {
    expect(statementParameters("SELECT 1")).toEqual([]);
    expect(statementParameters("")).toEqual([]);
  });

  it("looks only at the first statement", () => {
    expect(statementParameters("SELECT ?; SELECT :a, :b")).toEqual([null]);
  });

  it("keeps identifier characters and TCL-style suffixes as part of a name", () => {
    expect(statementParameters("SELECT :a_1$b, $x::y, $arr(k), :ünï")).toEqual([
      ":a_1$b",
      "$x::y",
      "$arr(k)",
      ":ünï",
    ]);
  });

  it("does not treat a lone prefix character as a parameter", () => {
    expect(statementParameters("SELECT a : b, @ , $")).toEqual([]);
  });

  it("does not throw on an unterminated string and ignores what it swallows", () => {
    expect(statementParameters("SELECT ?, 'abc :x")).toEqual([null]);
  });
});
