/**
 * `SHOAL_METRICS_PER_DATABASE`: statements, rows, replication and backup delay labelled by
 * database id, read from a real Shoal with two databases, a replica location and a backup source.
 */
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { createGroup, createUser, type TestUser } from "../helpers/factories.js";
import { scrape } from "../helpers/metrics.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let user: TestUser;
let one: TestDatabase;
let two: TestDatabase;

beforeAll(async () => {
  h = await startTestShoal({ metricsPerDatabase: true });
  user = await createUser(h);
  await createGroup(user, user.username, "pair", "aws-us-east-1");
  expect(
    (await user.api.post(`/v1/organizations/${user.username}/groups/pair/locations/aws-eu-west-1`)).status,
  ).toBe(200);
  one = await setupDatabase(h, { user, group: "pair" });
  two = await setupDatabase(h, { user, group: "pair" });
});
afterAll(() => h.close());

describe("metrics by database, when the operator turns them on", () => {
  it("labels statements and rows with each database's id", async () => {
    for (const [d, rows] of [
      [one, 2],
      [two, 5],
    ] as const) {
      const c = createClient({ url: d.urls.httpPath, authToken: d.token });
      await c.execute("CREATE TABLE t (v)");
      for (let i = 0; i < rows; i++) await c.execute({ sql: "INSERT INTO t VALUES (?)", args: [i] });
      c.close();
    }
    const s = await scrape(h.url, h.adminToken);
    expect(s.value("shoal_statements_total", { kind: "insert", database: one.id })).toBe(2);
    expect(s.value("shoal_statements_total", { kind: "insert", database: two.id })).toBe(5);
    expect(s.value("shoal_rows_written_total", { database: one.id })).toBe(2);
    expect(s.value("shoal_rows_written_total", { database: two.id })).toBe(5);
    // Latencies stay per kind only: a histogram per database would multiply every bucket.
    expect(s.series("shoal_statement_duration_seconds").every((m) => !("database" in m.labels))).toBe(true);
  });

  it("shows replication lag per replica location, and how far each replica is behind", async () => {
    const c = createClient({ url: one.urls.httpPath, authToken: one.token });
    await c.execute("INSERT INTO t VALUES ('replicated')");
    c.close();
    expect(
      (await user.api.get(`/v1/organizations/${user.username}/groups/pair/locations/aws-eu-west-1/wait`))
        .status,
    ).toBe(200);
    await expect
      .poll(async () =>
        (await scrape(h.url, h.adminToken)).value("shoal_replication_lag_seconds", {
          location: "aws-eu-west-1",
        }),
      )
      .toBeGreaterThan(0);
    const s = await scrape(h.url, h.adminToken);
    const behind = s.series("shoal_replication_behind_seconds", {
      location: "aws-eu-west-1",
      database: one.id,
    });
    expect(behind).toHaveLength(1);
    expect(behind[0]!.value).toBeGreaterThanOrEqual(0);
  });

  it("feeds shoal_backup_delay_seconds from a registered backup status, per database", async () => {
    h.shoal.deps.metrics.addBackupSource(() => ({
      delayMs: 4000,
      databases: [
        { id: one.id, delayMs: 4000 },
        { id: two.id, delayMs: 0 },
      ],
    }));
    const s = await scrape(h.url, h.adminToken);
    expect(s.value("shoal_backup_delay_seconds", { database: one.id })).toBe(4);
    expect(s.series("shoal_backup_delay_seconds", { database: two.id })).toEqual([
      { labels: { database: two.id }, value: 0 },
    ]);
  });
});
