import { describe, expect, it } from "vitest";
import { ShoalMetrics } from "../../src/metrics/metrics.js";
import { statementKind, statementShape } from "../../src/metrics/statement-kind.js";
import { parseMetrics } from "../helpers/metrics.js";

describe("statement kinds and shapes", () => {
  it("names a statement by its first keyword, past comments and whitespace", () => {
    expect(statementKind("SELECT 1")).toBe("select");
    expect(statementKind("  -- note\n/* c */ insert into t values (1)")).toBe("insert");
    expect(statementKind("END")).toBe("commit");
    expect(statementKind("WITH x AS (SELECT 1) SELECT * FROM x")).toBe("with");
    expect(statementKind("frobnicate")).toBe("other");
    expect(statementKind("")).toBe("other");
  });

  it("masks every literal in a statement's shape and cuts it short", () => {
    expect(statementShape("INSERT INTO t (a, b, c) VALUES ('secret', 42, x'abcd')")).toBe(
      "INSERT INTO t (a, b, c) VALUES (?, ?, ?)",
    );
    expect(statementShape("SELECT * FROM t2 WHERE v = 'it''s' AND n > -3.5e2 -- 'tail'")).toBe(
      "SELECT * FROM t2 WHERE v = ? AND n > ?",
    );
    expect(statementShape("UPDATE t SET v = 'never closed")).toBe("UPDATE t SET v = ?");
    const long = statementShape(`SELECT ${"col, ".repeat(100)}x FROM t`);
    expect(long.length).toBeLessThanOrEqual(121);
    expect(long.endsWith("…")).toBe(true);
  });
});

describe("the backup delay hook", () => {
  it("shows nothing until a backup source is registered, then its largest delay", async () => {
    const metrics = new ShoalMetrics({ perDatabase: false });
    const before = await parseMetrics((await metrics.scrape()).body);
    expect(before.series("shoal_backup_delay_seconds")).toEqual([]);
    let delayMs = 1500;
    metrics.addBackupSource(() => ({ delayMs }));
    metrics.addBackupSource(() => undefined);
    expect((await parseMetrics((await metrics.scrape()).body)).value("shoal_backup_delay_seconds")).toBe(1.5);
    delayMs = 0;
    expect((await parseMetrics((await metrics.scrape()).body)).series("shoal_backup_delay_seconds")).toEqual([
      { labels: {}, value: 0 },
    ]);
  });
});
