/**
 * Replicas seeded from the backup bucket: two real `shoal` processes on one real PostgreSQL, both
 * shipping to a real S3-compatible server (s3rver). When node B comes to hold a replica of a
 * database whose primary is on node A, B starts it from the bucket's copy and takes only the
 * frames after it from A; with A down, B serves the bucket's rows and catches up once A is back.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instanceFile, isValidDatabase } from "../helpers/files.js";
import { type Client, client } from "../helpers/http.js";
import { scrape } from "../helpers/metrics.js";
import {
  type Cluster,
  EAST,
  printNodeWarningsOnFailure,
  rows,
  run,
  SETTLE_MS,
  startCluster,
  userWithDatabase,
  WEST,
  within,
} from "../helpers/nodes.js";
import type { ShoalProcess } from "../helpers/process.js";
import { startTestS3, type TestS3 } from "../helpers/s3-server.js";
import { ADMIN_TOKEN } from "../helpers/shoal.js";

printNodeWarningsOnFailure();

let cluster: Cluster;
let s3: TestS3;
let a: ShoalProcess;
let b: ShoalProcess;
let userToken: string;
let token: string;
let dbId: string;
const org = "seeder";
const api = (): Client => client(a.url, userToken);
const atA = () => `${a.url}/db/${org}/d1/`;
const atB = () => `${b.url}/db/${org}/d1@${WEST}/`;
let backupEnv: Record<string, string>;

/** Waits until A says the bucket has everything of `name` committed so far; its shipped frame. */
async function shipped(name = "d1"): Promise<{ generation: number; frame: number }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const s = (await client(a.url, ADMIN_TOKEN).get("/v1/admin/backups")).body;
    const d = s.databases?.find((x: { name: string }) => x.name === name);
    if (d && d.frame !== null && d.delay_ms === 0) return { generation: d.generation, frame: d.frame };
    if (Date.now() > deadline) throw new Error(`not shipped: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A node's log lines saying `msg` about database `id`, parsed. */
function logged(node: ShoalProcess, msg: string, id = dbId): Array<Record<string, any>> {
  return node
    .stdout()
    .split("\n")
    .filter((l) => l.includes(`"msg":"${msg}"`) && l.includes(id))
    .map((l) => JSON.parse(l));
}

const seeds = (node: ShoalProcess, id = dbId) => logged(node, "replica seeded from the backup bucket", id);

/** The frame ranges B asked A for (`GET /replication/{db}/sync/{generation}/{start}/{end}`), in order. */
function framesAsked(): Array<{ generation: number; start: number }> {
  return logged(a, "data plane request")
    .filter((l) => l.endpoint === "sync-frames")
    .map((l) => /\/sync\/(\d+)\/(\d+)\/\d+$/.exec(l.path)!)
    .map((m) => ({ generation: Number(m[1]), start: Number(m[2]) }));
}

/** Adds `n` rows of 300 random bytes each in one commit. */
async function addRows(n: number, tag: string): Promise<void> {
  await run(
    atA(),
    token,
    `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${n})
     INSERT INTO t (tag, v) SELECT '${tag}', hex(randomblob(300)) FROM c`,
  );
}

/** Every row, as the node at `base` serves them. */
function content(base: string): Promise<unknown[][]> {
  return rows(base, token, "SELECT id, tag, v FROM t ORDER BY id");
}

/** SQLite's own check of B's replica file (a PRAGMA sent to a replica goes to its primary). */
function replicaFileIsWhole(): boolean {
  return isValidDatabase(instanceFile(cluster.dirs.get("node-b")!, WEST, dbId));
}

beforeAll(async () => {
  [cluster, s3] = await Promise.all([startCluster(), startTestS3()]);
  backupEnv = {
    SHOAL_BACKUP_URL: `s3://${s3.bucket}/seed`,
    SHOAL_BACKUP_ENDPOINT: s3.endpoint,
    SHOAL_BACKUP_ACCESS_KEY_ID: "S3RVER",
    SHOAL_BACKUP_SECRET_ACCESS_KEY: "S3RVER",
    SHOAL_BACKUP_INTERVAL_MS: "200",
  };
  // A logs the replication requests it serves (at debug): which frames B asked for.
  [a, b] = await Promise.all([
    cluster.start("node-a", EAST, { ...backupEnv, SHOAL_LOG_LEVEL: "debug" }),
    cluster.start("node-b", WEST, backupEnv),
  ]);
  ({ userToken, token, dbId } = await userWithDatabase(a, org));
  await run(atA(), token, "CREATE TABLE t (id INTEGER PRIMARY KEY, tag TEXT, v TEXT)");
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await s3?.close();
});

describe("a replica seeded from the backup bucket", () => {
  it("starts B's replica from the bucket and takes only the later frames from A", async () => {
    for (let i = 0; i < 4; i++) await addRows(100, "shipped");
    const bucket = await shipped();
    // Commits the bucket doesn't have yet (its server is down): they can only come from A.
    await s3.stop();
    for (let i = 0; i < 2; i++) await addRows(50, "tail");
    await s3.start();

    const added = await api().post(`/v1/organizations/${org}/groups/g/locations/${WEST}`);
    expect(added.status, added.text).toBe(200);
    const [seed] = seeds(b);
    expect(seed, b.stdout()).toBeDefined();
    // Seeded at a commit of A's history the bucket had, checked against A's own frame there.
    expect(seed!.generation).toBe(bucket.generation);
    expect(seed!.frame).toBeGreaterThanOrEqual(bucket.frame);
    expect(seed!.checked).toBe(true);
    // The crux: B's first request continues right after the seed's frame (the check asked for that
    // very frame), so nothing the bucket gave is applied again and nothing after it is skipped.
    const asked = framesAsked();
    expect(asked[0]).toEqual({ generation: seed!.generation, start: seed!.frame });
    expect(asked[1]).toEqual({ generation: seed!.generation, start: seed!.frame + 1 });
    expect(asked.slice(1).every((r) => r.generation > seed!.generation || r.start > seed!.frame)).toBe(true);
    // A never sent B the whole database: no export was asked of it, only frames.
    const metrics = await scrape(a.url, ADMIN_TOKEN);
    expect(metrics.value("shoal_dataplane_requests_total", { endpoint: "sync-export" })).toBe(0);
    expect(metrics.value("shoal_dataplane_requests_total", { endpoint: "sync-frames" })).toBeGreaterThan(0);

    const [atAnow, atBnow] = await Promise.all([content(atA()), content(atB())]);
    expect(replicaFileIsWhole()).toBe(true);
    expect(atBnow.length).toBe(500);
    expect(atBnow).toEqual(atAnow);
  });

  it("follows A from the seed's position: a later write at A is read at B", async () => {
    await run(atA(), token, "INSERT INTO t (tag, v) VALUES ('after', 'x')");
    await within(SETTLE_MS, async () => {
      expect(await rows(atB(), token, "SELECT count(*) FROM t WHERE tag = 'after'")).toEqual([[1]]);
    });
    await addRows(200, "more");
    await within(SETTLE_MS, async () => {
      expect(await rows(atB(), token, "SELECT count(*) FROM t")).toEqual([[701]]);
    });
    const [atAnow, atBnow] = await Promise.all([content(atA()), content(atB())]);
    expect(replicaFileIsWhole()).toBe(true);
    expect(atBnow).toEqual(atAnow);
  });

  it("brings a fresh B up from the bucket while A is down, and catches up once A is back", async () => {
    // B's disk is lost: a new machine with B's id and a copy of the keys only.
    b.proc.kill("SIGKILL");
    await b.exited;
    const dirB = cluster.dirs.get("node-b")!;
    for (const e of await readdir(dirB))
      if (e !== "keys") await rm(path.join(dirB, e), { recursive: true, force: true });
    await addRows(100, "while B was gone");
    await shipped();
    const before = await content(atA());
    a.proc.kill("SIGKILL");
    await a.exited;

    b = await cluster.start("node-b", WEST, backupEnv);
    await within(SETTLE_MS, async () => {
      expect(await rows(atB(), token, "SELECT count(*) FROM t")).toEqual([[801]]);
    });
    expect(await content(atB())).toEqual(before);
    // Unchecked until A answers: nothing was compared with A yet.
    expect(seeds(b)[0]).toMatchObject({ checked: false });

    a = await cluster.start("node-a", EAST, backupEnv);
    await run(atA(), token, "INSERT INTO t (tag, v) VALUES ('A is back', 'y')");
    await within(SETTLE_MS, async () => {
      expect(await rows(atB(), token, "SELECT count(*) FROM t WHERE tag = 'A is back'")).toEqual([[1]]);
    });
    const [atAnow, atBnow] = await Promise.all([content(atA()), content(atB())]);
    expect(replicaFileIsWhole()).toBe(true);
    expect(atBnow).toEqual(atAnow);
    // Two node starts and two catch-ups, each bounded above: together more than 30 s on a busy CI machine.
  }, 90_000);

  it("seeds an encrypted database's replica with the bucket's ciphertext, read at B with the key", async () => {
    expect((await api().post(`/v1/organizations/${org}/groups`, { name: "g2", location: EAST })).status).toBe(
      200,
    );
    const key = randomBytes(32).toString("base64");
    const secret = `secret-${randomBytes(8).toString("hex")}`;
    const created = await api().post(`/v1/organizations/${org}/databases`, {
      name: "vault",
      group: "g2",
      remote_encryption: { encryption_key: key, encryption_cipher: "aes256cbc" },
    });
    expect(created.status, created.text).toBe(200);
    const id = created.body.database.DbId as string;
    const jwt = (await api().post(`/v1/organizations/${org}/databases/vault/auth/tokens`)).body.jwt as string;
    const opts = { authToken: jwt, remoteEncryptionKey: key };
    const primary = createClient({ url: `${a.url}/db/${org}/vault/`, ...opts });
    const replica = createClient({ url: `${b.url}/db/${org}/vault@${WEST}/`, ...opts });
    await primary.execute("CREATE TABLE t (v TEXT)");
    for (let i = 0; i < 20; i++)
      await primary.execute({ sql: "INSERT INTO t VALUES (?)", args: [`${secret}-${i}`] });
    await shipped("vault");

    const added = await api().post(`/v1/organizations/${org}/groups/g2/locations/${WEST}`);
    expect(added.status, added.text).toBe(200);
    expect(seeds(b, id)).toMatchObject([{ checked: true }]);
    const values = async () => (await replica.execute("SELECT v FROM t ORDER BY rowid")).rows.map((r) => r.v);
    expect(await values()).toEqual(Array.from({ length: 20 }, (_, i) => `${secret}-${i}`));
    await primary.execute({ sql: "INSERT INTO t VALUES (?)", args: [`${secret}-after`] });
    await within(SETTLE_MS, async () => {
      expect((await values()).at(-1)).toBe(`${secret}-after`);
    });
    // Seeded and followed without the key: B's replica is as encrypted as A's file.
    expect(readFileSync(instanceFile(cluster.dirs.get("node-b")!, WEST, id)).includes(secret)).toBe(false);
    primary.close();
    replica.close();
  });

  it("copies the replica from A when the bucket can't be read, and says why", async () => {
    await s3.stop();
    try {
      const db = await api().post(`/v1/organizations/${org}/databases`, { name: "d3", group: "g" });
      expect(db.status, db.text).toBe(200);
      const id = db.body.database.DbId as string;
      const t3 = (await api().post(`/v1/organizations/${org}/databases/d3/auth/tokens`)).body.jwt as string;
      await run(`${a.url}/db/${org}/d3/`, t3, "CREATE TABLE x (n)");
      await run(`${a.url}/db/${org}/d3/`, t3, "INSERT INTO x VALUES (7)");
      await within(SETTLE_MS, async () => {
        expect(await rows(`${b.url}/db/${org}/d3@${WEST}/`, t3, "SELECT n FROM x")).toEqual([[7]]);
      });
      const [why] = logged(b, "replica not seeded from the backup bucket; copying it from its primary", id);
      expect(why?.reason, b.stdout()).toBeTruthy();
      expect(JSON.stringify(why)).not.toContain("S3RVER");
      expect(seeds(b, id)).toEqual([]);
    } finally {
      await s3.start();
    }
  });
});
