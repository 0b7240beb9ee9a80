import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintReplicationToken } from "../../src/domain/data-access/db-tokens.js";
import { loadOrCreateSigningKey } from "../../src/lib/signing-keys.js";
import { type FrameSource, FrameSourceError, HttpFrameSource } from "../../src/replication/frame-source.js";
import { KeylessFollower } from "../../src/replication/keyless-follower.js";
import { setupDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let dir: string;

beforeAll(async () => {
  h = await startTestShoal();
  dir = await mkdtemp(path.join(tmpdir(), "shoal-follow-http-"));
});
afterAll(async () => {
  await h?.close();
  await rm(dir, { recursive: true, force: true });
});

const rowsOf = (file: string) => {
  const db = new Database(file);
  try {
    return db.prepare("SELECT id, v FROM t ORDER BY id").raw(true).all();
  } finally {
    db.close();
  }
};

describe("a keyless follower over Shoal's sync protocol", () => {
  it("follows a database through /info, /export and /sync across a generation change", async () => {
    const db = await setupDatabase(h);
    const base = () => `${h.url}/db/${db.org}/${db.name}`;
    const sql = () => createClient({ url: `${base()}/`, authToken: db.token });
    let c = sql();
    await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    await c.execute("INSERT INTO t (v) VALUES ('one'), ('two')");
    const replica = path.join(dir, "a.db");
    // The source reads the base URL at each call: the restart below keeps the port.
    const follower = new KeylessFollower({ path: replica, source: new HttpFrameSource(base(), db.token) });
    const first = await follower.sync();
    expect(first.bootstrapped).toBe(true);
    expect(rowsOf(replica)).toEqual([
      [1, "one"],
      [2, "two"],
    ]);

    await c.execute("INSERT INTO t (v) VALUES ('three')");
    const generation = first.position.generation;
    c.close();
    // A restart closes the database's connections: the frame log ends the generation.
    await h.restart();
    c = sql();
    await c.execute("INSERT INTO t (v) VALUES ('four')");
    const r = await follower.sync();
    expect(r.bootstrapped).toBe(false);
    expect(r.position.generation).toBeGreaterThan(generation);
    expect(rowsOf(replica)).toEqual([
      [1, "one"],
      [2, "two"],
      [3, "three"],
      [4, "four"],
    ]);
    c.close();
  });

  it("ends a sync at what the primary had when it began, though the primary commits ahead of every request", async () => {
    const db = await setupDatabase(h);
    const c = createClient({ url: `${h.url}/db/${db.org}/${db.name}/`, authToken: db.token });
    await c.execute("CREATE TABLE steady (n INTEGER)");
    const dbTokenKey = await loadOrCreateSigningKey(path.join(h.dataDir, "keys"), "db-tokens");
    const token = await mintReplicationToken({ dbTokenKey, clock: () => new Date() }, db.id, "aws-eu-west-1");
    const http = new HttpFrameSource(`${h.url}/db/${db.org}/${db.name}`, token);
    // Capped, so a sync that follows every commit still ends, and says how many requests it took.
    let commits = 0;
    let requests = 0;
    let committing = false;
    const source: FrameSource = {
      currentGeneration: () => http.currentGeneration(),
      exportInto: (g, dest) => http.exportInto(g, dest),
      async frames(g, start, end) {
        requests++;
        if (committing && commits < 200)
          await c.execute({ sql: "INSERT INTO steady (n) VALUES (?)", args: [++commits] });
        return http.frames(g, start, end);
      },
    };
    const follower = new KeylessFollower({ path: path.join(dir, "steady.db"), source });
    await follower.sync();
    committing = true;
    const before = requests;
    const r = await follower.sync();
    // Without the primary's horizon, one sync takes all 200 commits, one request each.
    expect(requests - before).toBeLessThan(10);
    expect(commits).toBeLessThan(200);
    expect(r.frames).toBeGreaterThan(0);
    c.close();
  });

  it("reports the primary's refusal with its status and message", async () => {
    const db = await setupDatabase(h);
    const source = new HttpFrameSource(`${h.url}/db/${db.org}/${db.name}`, "not-a-token");
    const follower = new KeylessFollower({ path: path.join(dir, "b.db"), source });
    const e = await follower.sync().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(FrameSourceError);
    expect((e as FrameSourceError).status).toBe(401);
    expect((e as Error).message).toMatch(/^the primary answered 401: /);
  });
});
