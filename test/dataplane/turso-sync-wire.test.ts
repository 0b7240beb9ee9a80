/**
 * `POST .../pull-updates` on the wire: the answer's header, which pages it carries, encodings,
 * selectors and revisions, checked by rebuilding database files from the pages and opening them.
 */
import { writeFileSync } from "node:fs";
import { Zstd } from "@hpcc-js/wasm-zstd";
import { type Client, createClient } from "@libsql/client";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProtobufWriter } from "../../src/lib/protobuf.js";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";
import { localFolder, type PullAnswer, pullBytes, pullRaw } from "../helpers/turso-sync.js";

let h: TestShoal;
let folder: Awaited<ReturnType<typeof localFolder>>;
let files = 0;

beforeAll(async () => {
  h = await startTestShoal();
  folder = await localFolder();
});
afterAll(async () => {
  await h.close();
  await folder.cleanup();
});

const PAGE = 4096;

async function filledDatabase(rows = 400): Promise<{ db: TestDatabase; remote: Client; base: string }> {
  const db = await setupDatabase(h);
  const remote = createClient({ url: db.urls.httpPath, authToken: db.token });
  await remote.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  await remote.execute({
    sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO t (v) SELECT printf('%.1000c', 'x') FROM n",
    args: [rows],
  });
  return { db, remote, base: `${h.url}/db/${db.org}/${db.name}` };
}

/** Writes pages onto an image (a copy of `onto`, or empty) the way the client does, cut to the database's size. */
function apply(answer: PullAnswer, onto?: Buffer): Buffer {
  const image = Buffer.alloc(answer.header.dbPages * PAGE);
  onto?.copy(image, 0, 0, Math.min(onto.length, image.length));
  for (const [page, data] of answer.pages) data.copy(image, (page - 1) * PAGE);
  return image;
}

/** Opens an image as a database file and runs a query on it. */
function query(image: Buffer, sql: string): unknown {
  const file = folder.file(`image-${++files}.db`);
  writeFileSync(file, image);
  const d = new Database(file);
  try {
    return d.prepare(sql).raw(true).all();
  } finally {
    d.close();
  }
}

const rollover = async (db: TestDatabase) => {
  expect(await h.shoal.deps.shards.rollover("aws-us-east-1", db.id)).toBe(true);
};

describe("pull-updates answers", () => {
  it("sends every page on a first pull, with the revision, the size in pages and the raw encoding", async () => {
    const { db, remote, base } = await filledDatabase(50);
    const pageCount = (await remote.execute("PRAGMA page_count")).rows[0]![0];
    const first = await pullRaw(base, db.token);
    expect(first.status).toBe(200);
    expect(first.header).toMatchObject({ dbPages: pageCount, raw: true, protocol: 1 });
    expect(first.header.revision).toMatch(new RegExp(`^${db.id}:\\d+:\\d+$`));
    expect([...first.pages.keys()]).toEqual(Array.from({ length: Number(pageCount) }, (_, i) => i + 1));
    expect(query(apply(first), "SELECT count(*) FROM t")).toEqual([[50]]);
  });

  it("sends only the pages a one-row change touched, and they bring the old copy up to date", async () => {
    const { db, remote, base } = await filledDatabase(400);
    const first = await pullRaw(base, db.token);
    expect(first.header.dbPages).toBeGreaterThan(100);
    await remote.execute("UPDATE t SET v = 'changed' WHERE id = 200");
    const next = await pullRaw(base, db.token, { clientRevision: first.header.revision });
    expect(next.header.revision).not.toBe(first.header.revision);
    expect(next.pages.size).toBeGreaterThan(0);
    expect(next.pages.size).toBeLessThan(5);
    expect(next.bytes * 20).toBeLessThan(first.bytes);
    const image = apply(next, apply(first));
    expect(query(image, "SELECT v FROM t WHERE id = 200")).toEqual([["changed"]]);
    expect(query(image, "PRAGMA integrity_check")).toEqual([["ok"]]);
  });

  it("answers a pull with nothing new with the same revision and no pages", async () => {
    const { db, base } = await filledDatabase(5);
    const first = await pullRaw(base, db.token);
    const again = await pullRaw(base, db.token, { clientRevision: first.header.revision });
    expect(again.status).toBe(200);
    expect(again.header.revision).toBe(first.header.revision);
    expect(again.header.dbPages).toBe(first.header.dbPages);
    expect(again.pages.size).toBe(0);
  });

  it("keeps revisions valid across a checkpoint and a restart: the pull after them is still a small diff", async () => {
    const { db, remote, base } = await filledDatabase(300);
    const first = await pullRaw(base, db.token);
    await remote.execute("INSERT INTO t (v) VALUES ('one')");
    await rollover(db);
    await remote.execute("INSERT INTO t (v) VALUES ('two')");
    await h.restart();
    const after = await pullRaw(`${h.url}/db/${db.org}/${db.name}`, db.token, {
      clientRevision: first.header.revision,
    });
    expect(after.status).toBe(200);
    expect(after.pages.size).toBeLessThan(10);
    const [, gen1] = first.header.revision.split(":");
    const [, gen2] = after.header.revision.split(":");
    expect(Number(gen2)).toBeGreaterThan(Number(gen1));
    expect(query(apply(after, apply(first)), "SELECT v FROM t WHERE id > 300 ORDER BY id")).toEqual([
      ["one"],
      ["two"],
    ]);
  });

  it("sends the whole database for a revision it can't diff from: another database's, or one it no longer has frames for", async () => {
    const { db, remote, base } = await filledDatabase(20);
    const other = await filledDatabase(3);
    const foreign = (await pullRaw(other.base, other.db.token)).header.revision;
    const whole = await pullRaw(base, db.token, { clientRevision: foreign });
    expect(whole.pages.size).toBe(whole.header.dbPages);

    const first = await pullRaw(base, db.token);
    await remote.execute("INSERT INTO t (v) VALUES ('later')");
    await rollover(db);
    await h.shoal.deps.shards.pruneLog("aws-us-east-1", db.id, Date.now() + 1000, 0);
    const pruned = await pullRaw(base, db.token, { clientRevision: first.header.revision });
    expect(pruned.pages.size).toBe(pruned.header.dbPages);
    expect(query(apply(pruned), "SELECT count(*) FROM t")).toEqual([[21]]);

    const garbage = await pullRaw(base, db.token, { clientRevision: "not a revision" });
    expect(garbage.pages.size).toBe(garbage.header.dbPages);
  });

  it("compresses each page with zstd when asked", async () => {
    const { db, base } = await filledDatabase(30);
    const raw = await pullRaw(base, db.token);
    const packed = await pullRaw(base, db.token, { encoding: 1 });
    expect(packed.header.raw).toBe(false);
    expect(packed.header.zstdLevel).toBe(3);
    expect(packed.header.revision).toBe(raw.header.revision);
    expect(packed.bytes * 3).toBeLessThan(raw.bytes);
    const zstd = await Zstd.load();
    for (const [page, data] of packed.pages) {
      expect(data.readUInt32LE(0)).toBe(0xfd2fb528); // a standard zstd frame
      expect(Buffer.from(zstd.decompress(data)).equals(raw.pages.get(page)!)).toBe(true);
    }
  });

  it("answers a long-poll with nothing new once its timeout passes, and drops a poll whose client left", async () => {
    const { db, base } = await filledDatabase(2);
    const first = await pullRaw(base, db.token);
    const idle = await pullRaw(base, db.token, { clientRevision: first.header.revision, longPollMs: 300 });
    expect(idle.status).toBe(200);
    expect(idle.header.revision).toBe(first.header.revision);
    expect(idle.pages.size).toBe(0);

    const abort = new AbortController();
    const body = new ProtobufWriter().string(3, first.header.revision).uint(4, 300_000).message();
    const gone = fetch(`${base}/pull-updates`, {
      method: "POST",
      headers: { authorization: `Bearer ${db.token}` },
      body,
      signal: abort.signal,
    }).catch(() => "aborted");
    await expect.poll(() => waiters(), { timeout: 5000 }).toBe(1);
    abort.abort();
    expect(await gone).toBe("aborted");
    await expect.poll(() => waiters(), { timeout: 5000 }).toBe(0);
  });
});

const waiters = async () => (await h.shoal.deps.shards.streams()).pullWaiters;

describe("pull-updates selectors and revisions", () => {
  it("sends only the pages a Roaring bitmap selects (array, run and bitmap containers)", async () => {
    const { db, base } = await filledDatabase(60);
    // array container: ids 0 and 2 (pages 1 and 3)
    const array = Buffer.from([0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 16, 0, 0, 0, 0, 0, 2, 0]);
    expect([...(await pullRaw(base, db.token, { pagesSelector: array })).pages.keys()]).toEqual([1, 3]);
    // run container: ids 4..6 (pages 5 to 7)
    const runs = Buffer.from([0x3b, 0x30, 0, 0, 1, 0, 0, 2, 0, 1, 0, 4, 0, 2, 0]);
    expect([...(await pullRaw(base, db.token, { pagesSelector: runs })).pages.keys()]).toEqual([5, 6, 7]);
    // bitmap container (more than 4096 values): every even id up to 9998
    const bits = Buffer.alloc(8192);
    for (let i = 0; i < 10_000; i += 2) bits[i >> 3]! |= 1 << (i & 7);
    const header = Buffer.from([0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 0x87, 0x13, 16, 0, 0, 0]);
    const evens = await pullRaw(base, db.token, { pagesSelector: Buffer.concat([header, bits]) });
    expect([...evens.pages.keys()].every((p) => p % 2 === 1)).toBe(true);
    expect(evens.pages.size).toBe(Math.ceil(evens.header.dbPages / 2));
  });

  it("answers at a pinned server revision of the current generation, and refuses one it can't rebuild", async () => {
    const { db, remote, base } = await filledDatabase(10);
    const then = await pullRaw(base, db.token);
    await remote.execute("DELETE FROM t WHERE id > 5");
    const pinned = await pullRaw(base, db.token, { serverRevision: then.header.revision });
    expect(pinned.header.revision).toBe(then.header.revision);
    expect(query(apply(pinned), "SELECT count(*) FROM t")).toEqual([[10]]);

    await rollover(db);
    const gone = await pullRaw(base, db.token, { serverRevision: then.header.revision });
    expect(gone.status).toBe(400);
    expect(gone.error?.code).toBe("REVISION_GONE");
    const unknown = await pullRaw(base, db.token, { serverRevision: "elsewhere:1:1" });
    expect(unknown.status).toBe(400);
    expect(unknown.error?.code).toBe("REVISION_UNKNOWN");
  });

  it("refuses malformed requests with 400 and changes nothing", async () => {
    const { db, base } = await filledDatabase(1);
    const truncated = await pullBytes(base, db.token, new Uint8Array([0x1a, 0x05, 0x61]));
    expect(truncated.status).toBe(400);
    expect(truncated.error?.code).toBe("PROTOCOL_ERROR");
    const encoding = await pullBytes(base, db.token, new Uint8Array([0x08, 0x07]));
    expect(encoding.status).toBe(400);
    expect(encoding.error?.message).toMatch(/encoding/);
    const selector = await pullRaw(base, db.token, { pagesSelector: new Uint8Array([1, 2, 3, 4]) });
    expect(selector.status).toBe(400);
    const encrypted = await fetch(`${base}/pull-updates`, {
      method: "POST",
      headers: { authorization: `Bearer ${db.token}`, "x-turso-encryption-key": "a".repeat(64) },
      body: new Uint8Array(0),
    });
    expect(encrypted.status).toBe(400);
    expect(((await encrypted.json()) as { code: string }).code).toBe("DATABASE_NOT_ENCRYPTED");
  });

  it("answers the older protocol's frame requests past the end with a status the Turso client reads", async () => {
    const { db, base } = await filledDatabase(1);
    const info = (await (
      await fetch(`${base}/info`, { headers: { authorization: `Bearer ${db.token}` } })
    ).json()) as {
      current_generation: number;
    };
    const res = await fetch(`${base}/sync/${info.current_generation}/1000/1001`, {
      headers: { authorization: `Bearer ${db.token}` },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: "checkpoint_needed", generation: info.current_generation });
    expect(typeof body.max_frame_no).toBe("number");
  });
});
