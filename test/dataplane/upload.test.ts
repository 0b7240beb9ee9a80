import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient, type Client as SqlClient } from "@libsql/client";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../helpers/dataplane.js";
import { createGroup, createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;
let org: string;
let scratch: string;
let port: string;
const opened: SqlClient[] = [];
const dbs = () => `/v1/organizations/${org}/databases`;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  org = u.username;
  port = new URL(h.url).port;
  await createGroup(u, org, "default", "aws-us-east-1");
  await u.api.post(`/v1/organizations/${org}/groups/default/locations/aws-eu-west-1`);
  scratch = await mkdtemp(path.join(tmpdir(), "shoal-upload-"));
});
afterAll(async () => {
  for (const c of opened) c.close();
  await h.close();
  await rm(scratch, { recursive: true, force: true });
});

/** A SQLite file made locally, the way a user prepares one: WAL mode, 4 KiB pages, checkpointed. */
function localDatabase(
  name: string,
  setup: string,
  pragmas = "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;",
): Buffer {
  const file = path.join(scratch, name);
  const db = new Database(file);
  db.exec(pragmas);
  db.exec(setup);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  return readFileSync(file);
}

/** Creates a database waiting for an upload; returns its hostname and a full-access token. */
async function waiting(name: string, extra: Record<string, unknown> = {}) {
  const r = await u.api.post(dbs(), { name, group: "default", seed: { type: "database_upload" }, ...extra });
  expect(r.status, r.text).toBe(200);
  return { host: `http://${r.body.database.Hostname}:${port}`, token: await mintToken(u, org, name) };
}

async function send(method: string, url: string, token: string | undefined, body?: Buffer | string) {
  const headers: Record<string, string> = { "content-type": "application/octet-stream" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function sqlClient(name: string, token: string, location = ""): SqlClient {
  const c = createClient({ url: `${h.url}/db/${org}/${name}${location}/`, authToken: token });
  opened.push(c);
  return c;
}

const PEOPLE =
  "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO people (name) VALUES ('Ada'), ('Grace');";

describe("uploading a database file: POST https://<hostname>/v1/upload", () => {
  it("answers SQL with a clear error until the file arrives, then serves the file's rows", async () => {
    const { host, token } = await waiting("single");
    const c = sqlClient("single", token);
    await expect(c.execute("SELECT 1")).rejects.toMatchObject({
      code: "DATABASE_AWAITING_UPLOAD",
      message: expect.stringMatching(/has no content yet: it was created for an upload/),
    });
    const r = await send("POST", `${host}/v1/upload`, token, localDatabase("single.db", PEOPLE));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const rows = await c.execute("SELECT name FROM people ORDER BY id");
    expect(rows.rows.map((x) => x.name)).toEqual(["Ada", "Grace"]);
    await c.execute("INSERT INTO people (name) VALUES ('Barbara')");
    expect((await c.execute("SELECT count(*) AS n FROM people")).rows[0]!.n).toBe(3);
  });

  it("brings the group's replicas along: a read at another location sees the uploaded rows", async () => {
    const token = await mintToken(u, org, "single");
    const at = sqlClient("single", token, "@aws-eu-west-1");
    const rows = await at.execute("SELECT count(*) AS n FROM people");
    expect(rows.rows[0]!.n).toBe(3);
  });

  it("takes one upload only: a second one, or one to an ordinary database, is a conflict", async () => {
    const token = await mintToken(u, org, "single");
    const again = await send(
      "POST",
      `${h.url}/db/${org}/single/v1/upload`,
      token,
      localDatabase("again.db", PEOPLE),
    );
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("DATABASE_NOT_AWAITING_UPLOAD");
    await u.api.post(dbs(), { name: "ordinary", group: "default" });
    const t = await mintToken(u, org, "ordinary");
    const r = await send("POST", `${h.url}/db/${org}/ordinary/v1/upload`, t, localDatabase("o.db", PEOPLE));
    expect(r.status).toBe(409);
  });

  it("refuses files that can't be hosted, saying why, and keeps waiting for a good one", async () => {
    const { host, token } = await waiting("picky");
    const bad = await send(
      "POST",
      `${host}/v1/upload`,
      token,
      localDatabase("big-pages.db", PEOPLE, "PRAGMA page_size = 8192; PRAGMA journal_mode = WAL;"),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("INVALID_DATABASE_FILE");
    expect(bad.body.message).toMatch(/8192-byte pages and must use 4096/);
    const garbage = await send("POST", `${host}/v1/upload`, token, "PRAGMA foreign_keys=OFF;\n".repeat(100));
    expect(garbage.status).toBe(400);
    expect(garbage.body.message).toMatch(/not a SQLite database/);
    const broken = localDatabase("broken.db", `${PEOPLE} CREATE INDEX people_name ON people (name);`);
    broken.fill(0xff, 4096 * 2, 4096 * 2 + 200);
    const damaged = await send("POST", `${host}/v1/upload`, token, broken);
    expect(damaged.status).toBe(400);
    const c = sqlClient("picky", token);
    await expect(c.execute("SELECT 1")).rejects.toMatchObject({ code: "DATABASE_AWAITING_UPLOAD" });
    const good = await send("POST", `${host}/v1/upload`, token, localDatabase("good.db", PEOPLE));
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    expect((await c.execute("SELECT count(*) AS n FROM people")).rows[0]!.n).toBe(2);
  });

  it("refuses a file larger than the database's size limit", async () => {
    const { host, token } = await waiting("limited", { size_limit: "16kb" });
    const big = localDatabase("big.db", "CREATE TABLE b (v); INSERT INTO b VALUES (zeroblob(100000));");
    const r = await send("POST", `${host}/v1/upload`, token, big);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/more than the 16384 allowed/);
  });

  it("needs a full-access token of that database", async () => {
    const { host } = await waiting("guarded");
    const file = localDatabase("guarded.db", PEOPLE);
    expect((await send("POST", `${host}/v1/upload`, undefined, file)).status).toBe(401);
    const readOnly = await mintToken(u, org, "guarded", "?authorization=read-only");
    expect((await send("POST", `${host}/v1/upload`, readOnly, file)).status).toBe(403);
    const other = await mintToken(u, org, "single");
    expect((await send("POST", `${host}/v1/upload`, other, file)).status).toBe(403);
    const stranger = await createUser(h);
    await createGroup(stranger, stranger.username, "default");
    await stranger.api.post(`/v1/organizations/${stranger.username}/databases`, {
      name: "theirs",
      group: "default",
    });
    const foreign = await mintToken(stranger, stranger.username, "theirs");
    expect((await send("POST", `${host}/v1/upload`, foreign, file)).status).toBe(403);
  });
});

describe("uploads while writes are blocked", () => {
  it("refuses an upload while the database's writes are blocked, and takes it once they are not", async () => {
    const { host, token } = await waiting("frozen");
    const config = `${dbs()}/frozen/configuration`;
    expect((await u.api.patch(config, { block_writes: true })).status).toBe(200);
    const file = localDatabase("frozen.db", PEOPLE);
    const r = await send("POST", `${host}/v1/upload`, token, file);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: "BLOCKED" });
    expect((await u.api.patch(config, { block_writes: false })).status).toBe(200);
    expect((await send("POST", `${host}/v1/upload`, token, file)).status).toBe(200);
    const rows = await sqlClient("frozen", token).execute("SELECT count(*) AS n FROM people");
    expect(rows.rows[0]?.n).toBe(2);
  });
});

describe("the turso CLI's resumable upload: /v2/upload/start, chunks, finalize", () => {
  it("assembles chunks sent in any order and retried, then installs the file", async () => {
    const { host, token } = await waiting("chunked");
    // Big enough for two chunks.
    const file = localDatabase(
      "chunked.db",
      "CREATE TABLE b (id INTEGER PRIMARY KEY, v BLOB); INSERT INTO b (v) VALUES (randomblob(9000000)); INSERT INTO b (v) VALUES (x'01');",
    );
    const start = await send(
      "PUT",
      `${host}/v2/upload/start`,
      token,
      JSON.stringify({ db_size_bytes: file.length }),
    );
    expect(start.status, JSON.stringify(start.body)).toBe(200);
    const { chunk_size: size, upload_id: id } = start.body as { chunk_size: number; upload_id: string };
    const chunks = Math.ceil(file.length / size);
    expect(chunks).toBeGreaterThan(1);
    const part = (n: number) => file.subarray(n * size, Math.min(file.length, (n + 1) * size));
    for (const n of [...Array(chunks).keys()].reverse()) {
      expect((await send("PUT", `${host}/v2/upload/${id}/chunk/${n}`, token, part(n))).status).toBe(200);
    }
    expect((await send("PUT", `${host}/v2/upload/${id}/chunk/0`, token, part(0))).status).toBe(200);
    const done = await send("PUT", `${host}/v2/upload/${id}/finalize`, token);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const c = sqlClient("chunked", token);
    const r = await c.execute("SELECT count(*) AS n, sum(length(v)) AS bytes FROM b");
    expect(r.rows[0]).toMatchObject({ n: 2, bytes: 9_000_001 });
  });

  it("accepts the older CLI's paths without an upload id, and a rollback-journal file", async () => {
    const { host, token } = await waiting("legacy");
    const file = localDatabase("legacy.db", PEOPLE, "PRAGMA page_size = 4096; PRAGMA journal_mode = DELETE;");
    expect(file[18]).toBe(1);
    const start = await send(
      "PUT",
      `${host}/v2/upload/start`,
      token,
      JSON.stringify({ db_size_bytes: file.length }),
    );
    expect(start.status).toBe(200);
    expect((await send("PUT", `${host}/v2/upload/chunk/0`, token, file)).status).toBe(200);
    expect((await send("PUT", `${host}/v2/upload/finalize`, token)).status).toBe(200);
    expect((await sqlClient("legacy", token).execute("SELECT count(*) AS n FROM people")).rows[0]!.n).toBe(2);
  });

  it("refuses chunks of the wrong size, a finalize with chunks missing, and unknown uploads", async () => {
    const { host, token } = await waiting("careful");
    const file = localDatabase("careful.db", PEOPLE);
    const bad = await send("PUT", `${host}/v2/upload/start`, token, JSON.stringify({ db_size_bytes: 1000 }));
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/whole number of 4096-byte pages/);
    const start = await send(
      "PUT",
      `${host}/v2/upload/start`,
      token,
      JSON.stringify({ db_size_bytes: file.length }),
    );
    const id = start.body.upload_id as string;
    expect((await send("PUT", `${host}/v2/upload/${id}/chunk/0`, token, file.subarray(0, 100))).status).toBe(
      400,
    );
    const early = await send("PUT", `${host}/v2/upload/${id}/finalize`, token);
    expect(early.status).toBe(400);
    expect(early.body.message).toMatch(/missing chunks 0/);
    expect((await send("PUT", `${host}/v2/upload/${id}/chunk/7`, token, file)).status).toBe(400);
    const unknown = await send("PUT", `${host}/v2/upload/nope/chunk/0`, token, file);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("UPLOAD_NOT_FOUND");
    const other = await waiting("other-upload");
    const crossed = await send("PUT", `${other.host}/v2/upload/${id}/chunk/0`, other.token, file);
    expect(crossed.status).toBe(404);
  });
});
