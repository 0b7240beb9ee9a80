/**
 * The replication manager never acts as if a primary's location held a replica: asked to build
 * or rebuild one there (a late notice, a pull that failed just before a failover made the replica
 * the primary), it leaves the primary's files alone. A rebuild starts with a drop, which deletes.
 */
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { createClient } from "@libsql/client";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { createGroup, createUser } from "../helpers/factories.js";
import { instanceFile } from "../helpers/files.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

const PRIMARY = "aws-us-east-1";
const REPLICA = "aws-eu-west-1";
let h: TestShoal;
let db: TestDatabase;

/** Rows in the replica's own file, read directly; -1 while it can't be read (being rebuilt). */
function onDisk(file: string): number {
  try {
    const d = new Database(file, { readonly: true });
    try {
      return Number((d.prepare("SELECT count(*) FROM t").raw(true).get() as unknown[])[0]);
    } finally {
      d.close();
    }
  } catch {
    return -1;
  }
}

const count = async (): Promise<number> => {
  const c = createClient({ url: db.urls.httpPath, authToken: db.token });
  return Number((await c.execute("SELECT count(*) AS n FROM t")).rows[0]!.n);
};

beforeAll(async () => {
  h = await startTestShoal();
  const u = await createUser(h);
  await createGroup(u, u.username, "pair", PRIMARY);
  expect((await u.api.post(`/v1/organizations/${u.username}/groups/pair/locations/${REPLICA}`)).status).toBe(
    200,
  );
  db = await setupDatabase(h, { user: u, group: "pair" });
  const c = createClient({ url: db.urls.httpPath, authToken: db.token });
  await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  await c.execute("INSERT INTO t (v) VALUES ('kept'), ('kept too')");
});
afterAll(() => h.close());

describe("the replication manager at a primary's location", () => {
  it("leaves the primary's files alone when asked to rebuild a replica there", async () => {
    const file = instanceFile(h.dataDir, PRIMARY, db.id);
    h.shoal.replication.rebuild(db.id, PRIMARY);
    // The rebuild runs in the background: give it well over the time a drop and a build take.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(existsSync(file)).toBe(true);
    expect(existsSync(`${file}-info`)).toBe(false);
    expect(await count()).toBe(2);
  });

  it("builds nothing there when asked to ensure a replica, and says so without failing", async () => {
    const file = instanceFile(h.dataDir, PRIMARY, db.id);
    await h.shoal.replication.ensure(db.id, PRIMARY);
    expect(existsSync(`${file}-info`)).toBe(false);
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    await c.execute("INSERT INTO t (v) VALUES ('after')");
    expect(await count()).toBe(3);
  });

  it("still rebuilds the replica at the other location", async () => {
    const file = instanceFile(h.dataDir, REPLICA, db.id);
    h.shoal.replication.rebuild(db.id, REPLICA);
    // Read from the replica's own file (a read over HTTP may be answered by the primary meanwhile).
    const deadline = Date.now() + 15_000;
    let n = -1;
    while (n !== 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      n = existsSync(`${file}-info`) ? onDisk(file) : -1;
    }
    expect(n).toBe(3);
  });

  it("builds no replica over a file that is still a primary's (its node hasn't seen the primary move yet)", async () => {
    const file = instanceFile(h.dataDir, REPLICA, db.id);
    // A primary's file: no replica position beside it, a frame log folder instead.
    await h.shoal.replication.release(db.id, REPLICA);
    rmSync(`${file}-info`);
    mkdirSync(`${file}.log`);
    try {
      // What a pull-now notice from the new primary's node does when it arrives first.
      await h.shoal.replication.ensure(db.id, REPLICA);
      expect(existsSync(`${file}-info`)).toBe(false);
      expect(onDisk(file)).toBe(3);
    } finally {
      rmSync(`${file}.log`, { recursive: true });
    }
  });

  it("starts nothing after shutdown: a late pull or rebuild writes no file", async () => {
    const file = instanceFile(h.dataDir, REPLICA, db.id);
    await h.shoal.replication.close();
    rmSync(file);
    rmSync(`${file}-info`, { force: true });
    // What a timer or a notice still on its way would do once the node is stopping.
    h.shoal.replication.catchUp(db.id, REPLICA);
    h.shoal.replication.rebuild(db.id, REPLICA);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}-info`)).toBe(false);
  });
});
