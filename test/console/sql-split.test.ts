import { describe, expect, it } from "vitest";
import { splitStatements } from "../../console/src/sql-split.js";

describe("the SQL editor's statement splitter", () => {
  it("splits at semicolons that end statements, and drops empty ones", () => {
    expect(splitStatements("SELECT 1; SELECT 2;;\n  ")).toEqual(["SELECT 1", "SELECT 2"]);
    expect(splitStatements("SELECT 1")).toEqual(["SELECT 1"]);
  });

  it("keeps semicolons inside strings, quoted names and comments", () => {
    const sql = `INSERT INTO t VALUES ('a;b', 'it''s; fine'); SELECT "x;y", [a;b], \`c;d\` FROM t -- note; here
; /* block; comment */ SELECT 3`;
    expect(splitStatements(sql)).toEqual([
      "INSERT INTO t VALUES ('a;b', 'it''s; fine')",
      'SELECT "x;y", [a;b], `c;d` FROM t -- note; here',
      "/* block; comment */ SELECT 3",
    ]);
  });

  it("keeps a trigger's body (with CASE … END inside) in one statement", () => {
    const trigger = `CREATE TRIGGER tr AFTER INSERT ON t BEGIN
  UPDATE c SET n = CASE WHEN n IS NULL THEN 1 ELSE n + 1 END;
  INSERT INTO log VALUES (new.id);
END`;
    expect(splitStatements(`${trigger}; SELECT 1`)).toEqual([trigger, "SELECT 1"]);
  });

  it("leaves out text that is only comments", () => {
    expect(splitStatements("-- nothing here\n/* nor here */")).toEqual([]);
  });
});
