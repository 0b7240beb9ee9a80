import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
const DAY_MS = 86_400_000;
const daily = (q = "") => db.user.api.get(`/v1/organizations/${db.org}/databases/${db.name}/usage/daily${q}`);
const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
});
afterAll(() => h.close());

describe("usage per day (GET …/databases/{db}/usage/daily)", () => {
  it("answers today's rows read, rows written, queries and storage, from the database's first day", async () => {
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    for (let i = 0; i < 5; i++) await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`v${i}`] });
    await c.execute("SELECT * FROM t");
    c.close();

    const from = new Date(Date.now() - 10 * DAY_MS).toISOString();
    const r = await daily(`?from=${from}`);
    expect(r.status, r.text).toBe(200);
    // Days before the database existed are left out: it was created today.
    expect(r.body.database.days).toHaveLength(1);
    const [today] = r.body.database.days;
    expect(today.day).toBe(dayOf(Date.now()));
    expect(today.usage).toMatchObject({ rows_read: 5, rows_written: 5, queries: 7, bytes_synced: 0 });
    expect(today.usage.storage_bytes).toBeGreaterThan(0);
    expect(r.body.database.uuid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("fills days without activity with zeros and carries the last recorded size over them", async () => {
    const deps = h.shoal.deps;
    const realClock = deps.clock;
    // The size recorded at the last write is what the store keeps for today.
    const recorded = (await daily()).body.database.days[0].usage.storage_bytes as number;
    deps.clock = () => new Date(realClock().getTime() + 3 * DAY_MS);
    try {
      const r = await daily();
      expect(r.status, r.text).toBe(200);
      const days = r.body.database.days as Array<{ day: string; usage: Record<string, number | null> }>;
      expect(days.map((d) => d.day)).toEqual([0, 1, 2, 3].map((n) => dayOf(Date.now() + n * DAY_MS)));
      for (const d of days.slice(1))
        expect(d.usage).toMatchObject({ rows_read: 0, rows_written: 0, queries: 0 });
      expect(days[1]!.usage.storage_bytes).toBe(recorded);
      expect(days[2]!.usage.storage_bytes).toBe(recorded);
      expect(days[3]!.usage.storage_bytes).toBeGreaterThan(0);
    } finally {
      deps.clock = realClock;
    }
  });

  it("refuses malformed or impossible periods with a 400 in words", async () => {
    const bad = await daily("?from=yesterday");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^invalid from parameter: parsing time "yesterday"/);
    const reversed = await daily("?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z");
    expect(reversed.status).toBe(400);
    expect(reversed.body.error).toBe("invalid period: from is after to");
    const long = await daily("?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z");
    expect(long.status).toBe(400);
    expect(long.body.error).toBe("invalid period: at most 366 days at a time");
  });

  it("answers 404 for a database that doesn't exist, and an empty list for a period before it", async () => {
    const missing = await db.user.api.get(`/v1/organizations/${db.org}/databases/nope/usage/daily`);
    expect(missing.status).toBe(404);
    const before = await daily("?from=2020-01-01T00:00:00Z&to=2020-01-31T00:00:00Z");
    expect(before.status).toBe(200);
    expect(before.body.database.days).toEqual([]);
  });
});
