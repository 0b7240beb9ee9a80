/**
 * A step that follows a commit and fails (a full disk under the frame log, a failing notice, usage
 * counting, a schema journal) never turns the committed statement into an error answer: the
 * client gets its result, the row is there, the failure is logged and counted, and the database
 * goes on serving. Each step is made to fail with `SHOAL_FAILPOINTS` (lib/failpoints.ts), in the
 * shard processes that run the statements, with a real client over a real socket.
 */
import { PassThrough } from "node:stream";
import { createClient } from "@libsql/client";
import { afterEach, describe, expect, it } from "vitest";
import type { Failpoint } from "../../src/lib/failpoints.js";
import { mintToken, setupDatabase } from "../helpers/dataplane.js";
import { scrape } from "../helpers/metrics.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A Shoal with `failpoints` armed, and the lines it logs. */
async function faultyShoal(failpoints: Failpoint[]) {
  const sink = new PassThrough();
  const lines: string[] = [];
  sink.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean)));
  h = await startTestShoal({ failpoints, logLevel: "warn" }, { logTo: sink });
  const db = await setupDatabase(h);
  const client = createClient({ url: db.urls.httpPath, authToken: db.token });
  return { h, db, client, lines };
}

async function failures(shoal: TestShoal, step: string): Promise<number> {
  return (await scrape(shoal.url, shoal.adminToken)).value("shoal_after_commit_failures_total", { step });
}

describe("a step after a commit fails: the commit's answer stands", () => {
  it.each([
    ["after-commit.frame-log", "frame-log"],
    ["after-commit.usage", "usage"],
  ] as const)("%s: every insert answers its result, every row is there", async (fp, step) => {
    const { h, client, lines } = await faultyShoal([fp]);
    await client.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    for (let i = 1; i <= 20; i++) {
      const r = await client.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`row ${i}`] });
      expect(r.rowsAffected).toBe(1);
      expect(Number(r.lastInsertRowid)).toBe(i);
    }
    // An interactive transaction's COMMIT, and a batch (its own transaction), too.
    const tx = await client.transaction("write");
    await tx.execute("INSERT INTO t (v) VALUES ('in a transaction')");
    await tx.commit();
    await client.batch(
      ["INSERT INTO t (v) VALUES ('batch 1')", "INSERT INTO t (v) VALUES ('batch 2')"],
      "write",
    );
    const rows = await client.execute("SELECT count(*) AS n FROM t");
    expect(rows.rows[0]!.n).toBe(23);
    expect(await failures(h, step)).toBeGreaterThanOrEqual(20);
    expect(lines.some((l) => l.includes(`"step":"${step}"`) && l.includes("ENOSPC"))).toBe(true);
    client.close();
  });

  it("after-commit.notice: a failing notice of the commit doesn't fail its answer", async () => {
    const { h, client } = await faultyShoal(["after-commit.notice"]);
    await client.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    for (let i = 1; i <= 5; i++)
      await client.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`row ${i}`] });
    expect((await client.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(5);
    expect(await failures(h, "notice")).toBeGreaterThan(0);
    client.close();
  });

  it("after-commit.schema-journal: DDL on a schema database answers its result when its journal can't be written", async () => {
    const { h, db } = await faultyShoal(["after-commit.schema-journal"]);
    const created = await db.user.api.post(`/v1/organizations/${db.org}/databases`, {
      name: "faulty-schema",
      group: "default",
      is_schema: true,
    });
    expect(created.status, created.text).toBe(200);
    const token = await mintToken(db.user, db.org, "faulty-schema");
    const parent = createClient({ url: `${h.url}/db/${db.org}/faulty-schema/`, authToken: token });
    await parent.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)");
    await parent.batch(
      ["CREATE TABLE orders (id INTEGER PRIMARY KEY)", "CREATE INDEX o ON orders (id)"],
      "write",
    );
    const objects = await parent.execute(
      "SELECT name FROM sqlite_schema WHERE name IN ('users', 'orders', 'o')",
    );
    expect(objects.rows.length).toBe(3);
    expect(await failures(h, "schema-journal")).toBeGreaterThanOrEqual(2);
    parent.close();
  });

  it("after-commit.rollover-meta: the generation's state can't be written after its checkpoint; writes go on, a restart loses nothing", async () => {
    const { h, db, client } = await faultyShoal(["after-commit.rollover-meta"]);
    await client.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)");
    // Some 4,300 pages in one commit: past the frames after which a generation ends.
    await client.execute("INSERT INTO t (v) SELECT randomblob(3900) FROM generate_series(1, 4300)");
    // The next commits see the count, copy the frames aside, and end the generation (which fails at its end).
    for (let i = 0; i < 40 && (await failures(h, "frame-log")) === 0; i++) {
      const r = await client.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`small ${i}`] });
      expect(r.rowsAffected).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await failures(h, "frame-log")).toBeGreaterThan(0);
    const after = await client.execute("INSERT INTO t (v) VALUES ('after the failed rollover')");
    expect(after.rowsAffected).toBe(1);
    const count = Number((await client.execute("SELECT count(*) AS n FROM t")).rows[0]!.n);
    expect(count).toBeGreaterThan(4300);
    client.close();
    // The state on disk still says the generation was ending: the next start ends it as lost
    // (its replicas would start over), and every committed row is still there.
    await h.restart();
    const again = createClient({ url: db.urls.httpPath, authToken: db.token });
    expect(Number((await again.execute("SELECT count(*) AS n FROM t")).rows[0]!.n)).toBe(count);
    expect((await again.execute("INSERT INTO t (v) VALUES ('after the restart')")).rowsAffected).toBe(1);
    again.close();
  });
});
