import { describe, expect, it } from "vitest";
import { UsageTally } from "../../src/hosting/usage-tally.js";

const db = (id: string) => ({ id, orgId: "org-1", location: "aws-us-east-1" });

describe("the usage tally", () => {
  it("counts each database per UTC day, starting a new day's counts when the clock passes midnight", () => {
    let now = Date.parse("2026-11-26T23:59:59.000Z");
    const tally = new UsageTally(() => new Date(now));
    tally.record(db("a"), "INSERT INTO t VALUES (1)", 0, 1, 0.1);
    tally.record(db("a"), "SELECT * FROM t", 3, 0, 0.1);
    tally.record(db("b"), "SELECT 1", 1, 0, 0.1);
    now += 2_000;
    tally.record(db("a"), "SELECT * FROM t", 5, 0, 0.1);
    const batch = tally.take();
    const byKey = Object.fromEntries(batch.usage.map((u) => [`${u.dbId} ${u.day}`, u]));
    expect(byKey["a 2026-11-26"]).toMatchObject({ rowsRead: 3, rowsWritten: 1, queries: 2 });
    expect(byKey["b 2026-11-26"]).toMatchObject({ rowsRead: 1, rowsWritten: 0, queries: 1 });
    expect(byKey["a 2026-11-27"]).toMatchObject({ rowsRead: 5, rowsWritten: 0, queries: 1 });
    expect(batch.usage).toHaveLength(3);
    expect(batch.written).toEqual([["a|2026-11-26", "aws-us-east-1"]]);
  });

  it("starts again from nothing after a take, and adds a merged batch to what it counts next", () => {
    const tally = new UsageTally(() => new Date("2026-11-27T12:00:00.000Z"));
    tally.record(db("a"), "SELECT 1", 1, 0, 0.1);
    const first = tally.take();
    expect(tally.empty).toBe(true);
    tally.record(db("a"), "SELECT 1", 2, 0, 0.1);
    tally.merge(first);
    tally.record(db("a"), "INSERT INTO t VALUES (1)", 0, 4, 0.1);
    const second = tally.take();
    expect(second.usage).toEqual([
      expect.objectContaining({ dbId: "a", day: "2026-11-27", rowsRead: 3, rowsWritten: 4, queries: 3 }),
    ]);
  });
});
