import { type Client, createClient } from "@libsql/client";
import { connect } from "@tursodatabase/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";
import { localFolder, localRows } from "../helpers/turso-sync.js";

let h: TestShoal;
let folder: Awaited<ReturnType<typeof localFolder>>;

beforeAll(async () => {
  h = await startTestShoal();
  folder = await localFolder();
});
afterAll(async () => {
  await h.close();
  await folder.cleanup();
});

/** A database with a `notes` table, a client on it, and its sync URL (path form). */
async function notesDatabase(): Promise<{ db: TestDatabase; remote: Client; url: string }> {
  const db = await setupDatabase(h);
  const remote = createClient({ url: db.urls.httpPath, authToken: db.token });
  await remote.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
  await remote.execute("INSERT INTO notes (body) VALUES ('first')");
  return { db, remote, url: `${h.url}/db/${db.org}/${db.name}` };
}

const bodies = async (local: Awaited<ReturnType<typeof connect>>) =>
  (await localRows(local, "SELECT body FROM notes ORDER BY id")).map((r) => (r as { body: string }).body);

describe("@tursodatabase/sync 0.7.2 against Shoal", () => {
  it("bootstraps an empty local file on the first pull, then pulls a change made through @libsql/client", async () => {
    const { db, remote, url } = await notesDatabase();
    const local = await connect({ path: folder.file("first.db"), url, authToken: db.token });
    expect(await bodies(local)).toEqual(["first"]);

    await remote.execute("INSERT INTO notes (body) VALUES ('second')");
    expect(await local.pull()).toBe(true);
    expect(await bodies(local)).toEqual(["first", "second"]);
    await local.close();
  });

  it("syncs a database created a moment ago and never written to, both ways", async () => {
    const db = await setupDatabase(h);
    const url = `${h.url}/db/${db.org}/${db.name}`;
    const local = await connect({ path: folder.file("empty.db"), url, authToken: db.token });
    expect(await localRows(local, "SELECT name FROM sqlite_schema WHERE name = 'notes'")).toEqual([]);
    const remote = createClient({ url: db.urls.httpPath, authToken: db.token });
    await remote.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
    await remote.execute("INSERT INTO notes (body) VALUES ('first')");
    expect(await local.pull()).toBe(true);
    expect(await bodies(local)).toEqual(["first"]);
    await local.exec("INSERT INTO notes (body) VALUES ('local')");
    await local.push();
    expect((await remote.execute("SELECT count(*) AS n FROM notes")).rows[0]!.n).toBe(2);
    await local.close();
  });

  it("creates tables locally and pushes them to an empty database", async () => {
    const db = await setupDatabase(h);
    const url = `${h.url}/db/${db.org}/${db.name}`;
    const local = await connect({ path: folder.file("fresh.db"), url, authToken: db.token });
    await local.exec(
      "CREATE TABLE todos (id INTEGER PRIMARY KEY, title TEXT NOT NULL, done INTEGER DEFAULT 0)",
    );
    await local.exec("INSERT INTO todos (title) VALUES ('write docs')");
    await local.push();
    const remote = createClient({ url: db.urls.httpPath, authToken: db.token });
    expect(
      (await remote.execute("SELECT title, done FROM todos")).rows.map((r) => [r.title, r.done]),
    ).toEqual([["write docs", 0]]);
    await remote.execute("UPDATE todos SET done = 1");
    await local.pull();
    expect(await localRows(local, "SELECT title, done FROM todos")).toEqual([
      { title: "write docs", done: 1 },
    ]);
    await local.close();
  });

  it("answers a pull with nothing new (false), and one after a restart of Shoal", async () => {
    const { db, remote, url } = await notesDatabase();
    const local = await connect({ path: folder.file("idle.db"), url, authToken: db.token });
    expect(await local.pull()).toBe(false);
    expect(await local.pull()).toBe(false);

    await h.restart();
    const after = `${h.url}/db/${db.org}/${db.name}`;
    expect(after).toBe(url);
    expect(await local.pull()).toBe(false);
    await remote.execute("INSERT INTO notes (body) VALUES ('after restart')");
    expect(await local.pull()).toBe(true);
    expect(await bodies(local)).toEqual(["first", "after restart"]);
    await local.close();
  });

  it("pulls across generations: a checkpoint between two pulls loses nothing", async () => {
    const { db, remote, url } = await notesDatabase();
    const local = await connect({ path: folder.file("gen.db"), url, authToken: db.token });
    await remote.execute("INSERT INTO notes (body) VALUES ('before checkpoint')");
    expect(await h.shoal.deps.shards.rollover("aws-us-east-1", db.id)).toBe(true);
    await remote.execute("INSERT INTO notes (body) VALUES ('after checkpoint')");
    expect(await local.pull()).toBe(true);
    expect(await bodies(local)).toEqual(["first", "before checkpoint", "after checkpoint"]);
    await local.close();
  });

  it("pushes local writes; @libsql/client sees them and the next pull keeps them", async () => {
    const { db, remote, url } = await notesDatabase();
    const local = await connect({ path: folder.file("push.db"), url, authToken: db.token });
    await local.exec("INSERT INTO notes (body) VALUES ('written offline')");
    await local.exec("UPDATE notes SET body = 'first, edited' WHERE id = 1");
    await local.push();
    const rows = await remote.execute("SELECT body FROM notes ORDER BY id");
    expect(rows.rows.map((r) => r.body)).toEqual(["first, edited", "written offline"]);
    await local.pull();
    expect(await bodies(local)).toEqual(["first, edited", "written offline"]);
    // Pushing again sends nothing twice (the server keeps the client's last change id).
    await local.push();
    expect((await remote.execute("SELECT count(*) AS n FROM notes")).rows[0]!.n).toBe(2);
    await local.close();
  });

  it("applies a push only once: a retry after a lost answer doesn't bring back a row deleted since", async () => {
    const { db, remote, url } = await notesDatabase();
    let dropNextPush = true;
    const flaky: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const isPush = typeof init?.body !== "string" && String(input).endsWith("/v2/pipeline");
      if (isPush && dropNextPush && Buffer.from(init!.body as Uint8Array).includes("BEGIN IMMEDIATE")) {
        dropNextPush = false;
        await res.arrayBuffer(); // the server has done the work; the answer is lost on the way
        throw new TypeError("network connection lost");
      }
      return res;
    };
    const a = await connect({ path: folder.file("retry.db"), url, authToken: db.token, fetch: flaky });
    await a.exec("INSERT INTO notes (id, body) VALUES (7, 'pushed once')");
    await expect(a.push()).rejects.toThrow(/network connection lost/);
    expect((await remote.execute("SELECT count(*) AS n FROM notes WHERE id = 7")).rows[0]!.n).toBe(1);
    await remote.execute("DELETE FROM notes WHERE id = 7");
    await a.push(); // the server's record of this client's last change says: already applied
    expect((await remote.execute("SELECT count(*) AS n FROM notes WHERE id = 7")).rows[0]!.n).toBe(0);
    await a.pull();
    expect(await bodies(a)).toEqual(["first"]);
    await a.close();
  });

  it("keeps the rest of a push when the server refuses one of its rows, as Hrana batches do", async () => {
    const { db, remote, url } = await notesDatabase();
    const local = await connect({ path: folder.file("refused.db"), url, authToken: db.token });
    await remote.execute("CREATE UNIQUE INDEX notes_body ON notes (body)");
    await local.exec("INSERT INTO notes (body) VALUES ('fine')");
    await local.exec("INSERT INTO notes (body) VALUES ('first')"); // a duplicate on the server only
    await expect(local.push()).rejects.toThrow(/SQLITE_CONSTRAINT/);
    const rows = await remote.execute("SELECT body FROM notes ORDER BY id");
    expect(rows.rows.map((r) => r.body)).toEqual(["first", "fine"]);
    await local.close();
  });

  it("brings two local databases to the same state, conflicting edits included", async () => {
    const { db, url } = await notesDatabase();
    const a = await connect({ path: folder.file("a.db"), url, authToken: db.token, clientName: "a" });
    const b = await connect({ path: folder.file("b.db"), url, authToken: db.token, clientName: "b" });
    await a.exec("INSERT INTO notes (id, body) VALUES (10, 'from a')");
    await b.exec("INSERT INTO notes (id, body) VALUES (20, 'from b')");
    await a.exec("UPDATE notes SET body = 'a says' WHERE id = 1");
    await b.exec("UPDATE notes SET body = 'b says' WHERE id = 1");
    await a.push();
    await b.push();
    await a.pull();
    await b.pull();
    const expected = ["b says", "from a", "from b"];
    expect(await bodies(a)).toEqual(expected);
    expect(await bodies(b)).toEqual(expected);
    await a.close();
    await b.close();
  });

  it("returns a long-polling pull within a second of another client's write", async () => {
    const { db, remote, url } = await notesDatabase();
    const local = await connect({
      path: folder.file("poll.db"),
      url,
      authToken: db.token,
      longPollTimeoutMs: 20_000,
    });
    let returnedAt = 0;
    const pulled = local.pull().then((changed) => {
      returnedAt = Date.now();
      return changed;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(returnedAt).toBe(0); // still waiting: nothing has changed yet
    await remote.execute("INSERT INTO notes (body) VALUES ('wake up')");
    const wroteAt = Date.now();
    expect(await pulled).toBe(true);
    expect(returnedAt - wroteAt).toBeLessThan(1000);
    expect(await bodies(local)).toEqual(["first", "wake up"]);
    await local.close();
  });

  it("works by hostname, as on Turso", async () => {
    const { db, remote } = await notesDatabase();
    const local = await connect({ path: folder.file("host.db"), url: db.urls.httpHost, authToken: db.token });
    await remote.execute("INSERT INTO notes (body) VALUES ('by host')");
    await local.pull();
    await local.exec("INSERT INTO notes (body) VALUES ('pushed by host')");
    await local.push();
    expect((await remote.execute("SELECT count(*) AS n FROM notes")).rows[0]!.n).toBe(3);
    await local.close();
  });

  it("bootstraps in chunks selected by page bitmaps (pullBytesThreshold)", async () => {
    const { db, remote, url } = await notesDatabase();
    await remote.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, b BLOB)");
    for (let i = 0; i < 40; i++)
      await remote.execute({ sql: "INSERT INTO blobs (b) VALUES (randomblob(3000))" });
    const sums = await remote.execute("SELECT count(*) AS n, sum(length(b)) AS s FROM blobs");
    const asked: number[] = [];
    const counting: typeof fetch = async (input, init) => {
      if (String(input).endsWith("/pull-updates"))
        asked.push(new Uint8Array(init?.body as Uint8Array).length);
      return fetch(input, init);
    };
    const local = await connect({
      path: folder.file("chunks.db"),
      url,
      authToken: db.token,
      pullBytesThreshold: 16_384,
      fetch: counting,
    });
    expect(asked.length).toBeGreaterThan(5); // one request per 4 pages, each with a bitmap
    expect(await localRows(local, "SELECT count(*) AS n, sum(length(b)) AS s FROM blobs")).toEqual([
      { n: sums.rows[0]!.n, s: sums.rows[0]!.s },
    ]);
    expect(await localRows(local, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
    await local.close();
  });
});
