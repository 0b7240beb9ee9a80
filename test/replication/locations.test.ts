import { existsSync } from "node:fs";
import { createClient } from "@libsql/client";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken, setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { createGroup, createUser, type TestUser } from "../helpers/factories.js";
import { instanceFile } from "../helpers/files.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;
let db: TestDatabase;
const LOCS = ["aws-us-east-1", "aws-eu-west-1", "aws-ap-northeast-1"];
const at = (d: TestDatabase, loc: string) => `${h.url}/db/${d.org}/${d.name}@${loc}/`;
const g = (p = "") => `/v1/organizations/${u.username}/groups/three${p}`;

/** What a replica's own file holds, read directly (white-box: proves the data is in that location). */
function onDisk(dbId: string, loc: string, sql: string): unknown[][] {
  const file = new Database(instanceFile(h.dataDir, loc, dbId), { readonly: true });
  try {
    return file.prepare(sql).raw(true).all() as unknown[][];
  } finally {
    file.close();
  }
}

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  await createGroup(u, u.username, "three", LOCS[0]);
  for (const loc of LOCS.slice(1)) expect((await u.api.post(g(`/locations/${loc}`))).status).toBe(200);
  db = await setupDatabase(h, { user: u, group: "three" });
  const c = createClient({ url: db.urls.httpPath, authToken: db.token });
  await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
});
afterAll(() => h.close());

describe("replicas in every location of a group", () => {
  it("lists a primary and a replica per other location as instances", async () => {
    const r = await u.api.get(`/v1/organizations/${u.username}/databases/${db.name}/instances`);
    expect(r.body.instances).toEqual(
      LOCS.map((loc, i) => ({
        uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: loc,
        type: i === 0 ? "primary" : "replica",
        region: loc,
        hostname: `${db.name}-${u.username}.${loc}.shoal.test`,
      })),
    );
    const one = await u.api.get(
      `/v1/organizations/${u.username}/databases/${db.name}/instances/aws-eu-west-1`,
    );
    expect(one.body.instance.type).toBe("replica");
    expect(
      (await u.api.get(`/v1/organizations/${u.username}/databases/${db.name}/instances/mars`)).status,
    ).toBe(404);
    const group = await u.api.get(g());
    expect(group.body.group.status.locations).toEqual(LOCS.map((name) => ({ name, status: "up" })));
  });

  it("makes a write at the primary readable at every replica after wait", async () => {
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    await c.execute("INSERT INTO t (v) VALUES ('from-primary')");
    for (const loc of LOCS) {
      expect((await u.api.get(g(`/locations/${loc}/wait`))).status).toBe(200);
      if (loc !== LOCS[0]) expect(onDisk(db.id, loc, "SELECT v FROM t")).toContainEqual(["from-primary"]);
      const local = createClient({ url: at(db, loc), authToken: db.token });
      expect((await local.execute("SELECT v FROM t")).rows.map((r) => r.v)).toContain("from-primary");
    }
  });

  it("sends a write made at a replica location to the primary, and the writer reads it at once", async () => {
    for (const loc of LOCS.slice(1)) {
      const c = createClient({ url: at(db, loc), authToken: db.token });
      const ins = await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`via-${loc}`] });
      expect(ins.rowsAffected).toBe(1);
      // The very next read, on a new stream at the same location, sees it.
      expect(
        (await c.execute({ sql: "SELECT count(*) AS n FROM t WHERE v = ?", args: [`via-${loc}`] })).rows[0]!
          .n,
      ).toBe(1);
      const primary = createClient({ url: db.urls.httpPath, authToken: db.token });
      expect(
        (await primary.execute({ sql: "SELECT count(*) AS n FROM t WHERE v = ?", args: [`via-${loc}`] }))
          .rows[0]!.n,
      ).toBe(1);
    }
  });

  it("runs interactive transactions at a replica location on the primary", async () => {
    const c = createClient({ url: at(db, "aws-eu-west-1"), authToken: db.token });
    const tx = await c.transaction("write");
    await tx.execute("INSERT INTO t (v) VALUES ('tx-at-replica')");
    expect((await tx.execute("SELECT count(*) AS n FROM t WHERE v = 'tx-at-replica'")).rows[0]!.n).toBe(1);
    await tx.rollback();
    expect((await c.execute("SELECT count(*) AS n FROM t WHERE v = 'tx-at-replica'")).rows[0]!.n).toBe(0);
    await c.batch(["INSERT INTO t (v) VALUES ('batch-at-replica')"], "write");
    expect((await c.execute("SELECT count(*) AS n FROM t WHERE v = 'batch-at-replica'")).rows[0]!.n).toBe(1);
  });

  it("reaches an instance by hostname and over WebSocket too", async () => {
    const port = new URL(h.url).port;
    const ws = createClient({
      url: `ws://${db.name}-${u.username}.aws-ap-northeast-1.shoal.test:${port}`,
      authToken: db.token,
    });
    await ws.execute("INSERT INTO t (v) VALUES ('ws-at-replica')");
    expect((await ws.execute("SELECT count(*) AS n FROM t WHERE v = 'ws-at-replica'")).rows[0]!.n).toBe(1);
    ws.close();
    const nowhere = createClient({ url: at(db, "aws-us-west-2"), authToken: db.token });
    await expect(nowhere.execute("SELECT 1")).rejects.toMatchObject({ code: "INSTANCE_NOT_FOUND" });
  });

  it("loses nothing when the primary checkpoints in the middle of replication", async () => {
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    for (let i = 0; i < 60; i++) {
      await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`bulk-${i}`] });
      if (i % 20 === 10) expect(await h.shoal.deps.shards.rollover(LOCS[0]!, db.id)).toBe(true);
    }
    const expected = (await c.execute("SELECT count(*) AS n FROM t")).rows[0]!.n;
    for (const loc of LOCS.slice(1)) {
      expect((await u.api.get(g(`/locations/${loc}/wait`))).status).toBe(200);
      expect(onDisk(db.id, loc, "SELECT count(*) FROM t")).toEqual([[expected]]);
      expect(onDisk(db.id, loc, "PRAGMA integrity_check")).toEqual([["ok"]]);
    }
  });

  it("reads at the primary while a location's replica can't answer, and still reports the statement's own errors", async () => {
    const loc = "aws-ap-northeast-1";
    const local = createClient({ url: at(db, loc), authToken: db.token });
    await createClient({ url: db.urls.httpPath, authToken: db.token }).execute(
      "INSERT INTO t (v) VALUES ('while-unavailable')",
    );
    // As during a rebuild after a failover: the location's worker no longer has the replica.
    await h.shoal.replication.release(db.id, loc);
    try {
      const r = await local.execute("SELECT count(*) AS n FROM t WHERE v = 'while-unavailable'");
      expect(r.rows[0]?.n).toBe(1);
      await expect(local.execute("SELECT nope FROM t")).rejects.toThrow(/no such column/);
    } finally {
      await h.shoal.replication.ensure(db.id, loc);
    }
    expect(
      (await local.execute("SELECT count(*) AS n FROM t WHERE v = 'while-unavailable'")).rows[0]?.n,
    ).toBe(1);
  });

  it("catches a replica up after its location was down", async () => {
    await h.shoal.replication.pauseLocation("aws-eu-west-1");
    expect((await u.api.get(g())).body.group.status.locations[1]).toEqual({
      name: "aws-eu-west-1",
      status: "down",
    });
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    for (let i = 0; i < 5; i++)
      await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`while-down-${i}`] });
    expect(onDisk(db.id, "aws-eu-west-1", "SELECT count(*) FROM t WHERE v LIKE 'while-down-%'")).toEqual([
      [0],
    ]);
    h.shoal.replication.resumeLocation("aws-eu-west-1");
    expect((await u.api.get(g("/locations/aws-eu-west-1/wait"))).status).toBe(200);
    expect(onDisk(db.id, "aws-eu-west-1", "SELECT count(*) FROM t WHERE v LIKE 'while-down-%'")).toEqual([
      [5],
    ]);
  });
});

describe("adding and removing a location on a busy group", () => {
  it("gives 50 existing databases caught-up replicas, and removing the location removes them", async () => {
    const owner = await createUser(h);
    await createGroup(owner, owner.username, "fleet", "aws-us-east-1");
    const dbs: TestDatabase[] = [];
    for (let i = 0; i < 50; i++) {
      const d = await setupDatabase(h, { user: owner, group: "fleet", name: `tenant-${i}` });
      await createClient({ url: d.urls.httpPath, authToken: d.token }).execute(
        `CREATE TABLE marker AS SELECT ${i} AS n`,
      );
      dbs.push(d);
    }
    const add = await owner.api.post(
      `/v1/organizations/${owner.username}/groups/fleet/locations/aws-us-west-2`,
    );
    expect(add.status, add.text).toBe(200);
    for (const d of dbs) {
      const i = Number(d.name.split("-")[1]);
      expect(onDisk(d.id, "aws-us-west-2", "SELECT n FROM marker")).toEqual([[i]]);
    }
    const remove = await owner.api.delete(
      `/v1/organizations/${owner.username}/groups/fleet/locations/aws-us-west-2`,
    );
    expect(remove.status).toBe(200);
    for (const d of dbs) expect(existsSync(instanceFile(h.dataDir, "aws-us-west-2", d.id))).toBe(false);
  });

  it("answers wait at once for the primary, and 400 for a location outside the group", async () => {
    expect((await u.api.get(g("/locations/aws-us-east-1/wait"))).status).toBe(200);
    expect((await u.api.get(g("/locations/aws-us-west-2/wait"))).status).toBe(400);
    expect((await u.api.get(g("/locations/nowhere/wait"))).status).toBe(400);
  });

  it("keeps tokens working at every location after a rotation, with fresh tokens", async () => {
    expect(
      (await u.api.post(`/v1/organizations/${u.username}/databases/${db.name}/auth/rotate`)).status,
    ).toBe(200);
    const fresh = await mintToken(u, u.username, db.name);
    const c = createClient({ url: at(db, "aws-eu-west-1"), authToken: fresh });
    await c.execute("INSERT INTO t (v) VALUES ('after-rotation')");
    expect((await c.execute("SELECT count(*) AS n FROM t WHERE v = 'after-rotation'")).rows[0]!.n).toBe(1);
  });
});
