import { describe, expect, it } from "vitest";
import { hasStatement, splitStatements } from "../../src/cli/sql-split.js";

const sqls = (text: string) => splitStatements(text).statements.map((s) => s.sql);

describe("finding where statements end", () => {
  it("cuts at semicolons outside strings, quoted names and comments", () => {
    expect(
      sqls("SELECT 1; SELECT 'a;b'; SELECT \"x;y\", [p;q], `r;s` -- c;d\n; /* e;f */ SELECT 2;"),
    ).toEqual(["SELECT 1;", "SELECT 'a;b';", 'SELECT "x;y", [p;q], `r;s` -- c;d\n;', "/* e;f */ SELECT 2;"]);
    expect(sqls("SELECT 'it''s; fine';")).toEqual(["SELECT 'it''s; fine';"]);
  });

  it("keeps a trigger's body whole until END;", () => {
    const trigger =
      "CREATE TEMP TRIGGER t AFTER INSERT ON a BEGIN\n  INSERT INTO b VALUES (1);\n  UPDATE c SET n = n + 1;\nEND;";
    expect(sqls(`${trigger}\nSELECT 1;`)).toEqual([trigger, "SELECT 1;"]);
    expect(splitStatements("CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT 1;").statements).toEqual([]);
    // END as a column name or CASE ... END outside a trigger changes nothing.
    expect(sqls("SELECT CASE WHEN 1 THEN 2 END AS end;SELECT 3;")).toEqual([
      "SELECT CASE WHEN 1 THEN 2 END AS end;",
      "SELECT 3;",
    ]);
  });

  it("says what is left unfinished and on which line each statement starts", () => {
    const r = splitStatements("\n\nSELECT 1;\n  SELECT\n2; SELECT 3", 10);
    expect(r.statements).toEqual([
      { sql: "SELECT 1;", line: 12 },
      { sql: "SELECT\n2;", line: 13 },
    ]);
    expect(r.rest).toBe(" SELECT 3");
    expect(hasStatement("  -- only a comment\n /* and another */ ;")).toBe(false);
    expect(hasStatement("SELECT")).toBe(true);
  });
});
