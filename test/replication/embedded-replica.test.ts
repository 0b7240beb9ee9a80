import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken, setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { clientReplica, replicaClient } from "../helpers/replica-client.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
let dir: string;

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  dir = await mkdtemp(path.join(tmpdir(), "shoal-replica-"));
  const c = createClient({ url: db.urls.httpPath, authToken: db.token });
  await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  for (let i = 1; i <= 5; i++) await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`p${i}`] });
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

const syncUrl = () => `${h.url}/db/${db.org}/${db.name}`;

describe("embedded replicas of a Shoal database (libsql package, sync protocol v2)", () => {
  it("bootstraps, syncs new writes, and survives a generation change", async () => {
    const r = replicaClient();
    await r.open(path.join(dir, "a.db"), syncUrl(), db.token);
    await r.sync();
    expect(await r.query("SELECT v FROM t ORDER BY id")).toEqual([["p1"], ["p2"], ["p3"], ["p4"], ["p5"]]);

    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    await c.execute("INSERT INTO t (v) VALUES ('p6')");
    await r.sync();
    expect(await r.query("SELECT count(*) FROM t")).toEqual([[6]]);

    // End the generation on the primary (a checkpoint), then write more.
    expect(await h.shoal.deps.shards.rollover("aws-us-east-1", db.id)).toBe(true);
    await c.execute("INSERT INTO t (v) VALUES ('p7')");
    await r.sync();
    expect(await r.query("SELECT v FROM t ORDER BY id")).toContainEqual(["p7"]);
    expect(await r.query("SELECT count(*) FROM t")).toEqual([[7]]);
    await r.terminate();
  });

  it("sends writes made on the replica to the primary, and reads its own write at once", async () => {
    const r = replicaClient();
    await r.open(path.join(dir, "b.db"), syncUrl(), db.token);
    await r.sync();
    await r.run("INSERT INTO t (v) VALUES ('from-replica')");
    expect(await r.query("SELECT count(*) FROM t WHERE v = 'from-replica'")).toEqual([[1]]);
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    expect((await c.execute("SELECT count(*) AS n FROM t WHERE v = 'from-replica'")).rows[0]!.n).toBe(1);
    await r.terminate();
  });

  it("works through @libsql/client's embedded-replica mode (file URL + syncUrl)", async () => {
    const c = clientReplica();
    await c.open({ url: `file:${path.join(dir, "client.db")}`, syncUrl: syncUrl(), authToken: db.token });
    await c.sync();
    expect((await c.execute("SELECT count(*) FROM t")).rows[0]![0]).toBeGreaterThanOrEqual(5);
    const ins = await c.execute("INSERT INTO t (v) VALUES (?)", ["from-client-replica"]);
    expect(ins.rowsAffected).toBe(1);
    // readYourWrites (the default): the write is readable locally at once.
    expect((await c.execute("SELECT count(*) FROM t WHERE v = 'from-client-replica'")).rows).toEqual([[1]]);
    const primary = createClient({ url: db.urls.httpPath, authToken: db.token });
    await primary.execute("INSERT INTO t (v) VALUES ('later')");
    await c.sync();
    expect((await c.execute("SELECT count(*) FROM t WHERE v = 'later'")).rows).toEqual([[1]]);
    await c.terminate();
  });

  it("lets a read-only token sync but not write", async () => {
    const ro = await mintToken(db.user, db.org, db.name, "?authorization=read-only");
    const r = replicaClient();
    await r.open(path.join(dir, "c.db"), syncUrl(), ro);
    await r.sync();
    expect((await r.query("SELECT count(*) FROM t"))[0]![0]).toBeGreaterThan(0);
    await expect(r.run("INSERT INTO t (v) VALUES ('no')")).rejects.toThrow();
    await r.terminate();
  });

  it("refuses a token of another database", async () => {
    const other = await setupDatabase(h);
    const r = replicaClient();
    await expect(r.open(path.join(dir, "d.db"), syncUrl(), other.token)).rejects.toThrow();
    await r.terminate();
  });
});
