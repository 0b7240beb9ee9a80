/**
 * Fine-grained (table-level) token permissions, as Turso defines them: minted through the API
 * with `fine_grained_permissions`, carried in the token's `perm` claim, and enforced on every
 * statement over HTTP, WebSocket, batches and cursors, on the program SQLite compiled, so views,
 * CTEs and triggers reach nothing the token may not.
 */
import { type Client, createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken, pipeline, setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
const clients: Client[] = [];

const SCHEMA = [
  "CREATE TABLE comments (id INTEGER PRIMARY KEY, body TEXT)",
  "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT)",
  "CREATE TABLE secret (id INTEGER PRIMARY KEY, s TEXT)",
  "CREATE TABLE notes (id INTEGER PRIMARY KEY, n TEXT)",
  "CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID",
  "CREATE TABLE chk (n INT CHECK (n > 0))",
  "CREATE VIEW secret_view AS SELECT s FROM secret",
  // Inserting a note also writes a post: the note's writer must be allowed to write posts too.
  "CREATE TRIGGER note_posts AFTER INSERT ON notes BEGIN INSERT INTO posts (title) VALUES (new.n); END",
  "INSERT INTO comments (body) VALUES ('first')",
  "INSERT INTO posts (title) VALUES ('hello')",
  "INSERT INTO secret (s) VALUES ('hunter2')",
];

/** A token of the test database limited by `rules` (Turso's `fine_grained_permissions`). */
const limited = (rules: unknown, query = "") =>
  mintToken(db.user, db.org, db.name, query, { fine_grained_permissions: rules });

const over = (transport: "http" | "ws", token: string) => {
  const c = createClient({ url: transport === "http" ? db.urls.httpPath : db.urls.wsPath, authToken: token });
  clients.push(c);
  return c;
};

const count = async (c: Client, table: string) =>
  Number((await c.execute(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  const owner = createClient({ url: db.urls.httpPath, authToken: db.token });
  await owner.batch(SCHEMA, "write");
  owner.close();
});
afterAll(async () => {
  for (const c of clients) c.close();
  await h.close();
});

describe.each(["http", "ws"] as const)(
  "a token limited to comments:data_add and all:data_read, over %s",
  (t) => {
    let c: Client;
    beforeAll(async () => {
      c = over(
        t,
        await limited([
          { t: null, a: ["data_read"] },
          { t: ["comments"], a: ["data_add"] },
        ]),
      );
    });

    it("reads every table, SQLite's own included, and inserts into comments", async () => {
      expect(await count(c, "posts")).toBeGreaterThan(0);
      expect((await c.execute("SELECT s FROM secret_view")).rows[0]!.s).toBe("hunter2");
      expect((await c.execute("SELECT count(*) AS n FROM sqlite_schema")).rows[0]!.n).toBeGreaterThan(0);
      const before = await count(c, "comments");
      await c.execute({ sql: "INSERT INTO comments (body) VALUES (?)", args: [`via ${t}`] });
      expect(await count(c, "comments")).toBe(before + 1);
    });

    it("changes nothing else, naming the table and the action it lacks", async () => {
      const refusals: Array<[string, RegExp]> = [
        ["INSERT INTO posts (title) VALUES ('no')", /don't allow data_add on table posts/],
        ["UPDATE comments SET body = 'edited'", /don't allow data_update on table comments/],
        ["DELETE FROM comments WHERE id = 1", /don't allow data_delete on table comments/],
        ["DELETE FROM comments", /don't allow data_delete on table comments/],
        ["REPLACE INTO comments (id, body) VALUES (1, 'overwritten')", /data_update on table comments/],
        ["INSERT INTO kv VALUES ('k', 'v')", /data_add on table kv/],
        // The trigger's insert into posts counts as the token's own.
        ["INSERT INTO notes (n) VALUES ('x')", /data_add on table (notes|posts)/],
        ["CREATE TABLE mine (x)", /schema_add on table mine/],
        ["DROP TABLE posts", /schema_delete on table posts/],
        ["CREATE INDEX posts_title ON posts (title)", /schema_update on table posts/],
        ["ALTER TABLE posts ADD COLUMN extra", /schema_update on table posts/],
        ["PRAGMA user_version = 7", /schema_update on all tables/],
      ];
      const before = { comments: await count(c, "comments"), posts: await count(c, "posts") };
      for (const [statement, message] of refusals) {
        const e = await c.execute(statement).then(
          () => undefined,
          (error: { code?: string; message: string }) => error,
        );
        expect(e?.message, statement).toMatch(message);
        expect(e?.code, statement).toBe("FORBIDDEN");
      }
      expect({ comments: await count(c, "comments"), posts: await count(c, "posts") }).toEqual(before);
    });

    it("fails a whole batch with a refused step, and keeps an interactive transaction's stream", async () => {
      const before = await count(c, "comments");
      await expect(
        c.batch(
          ["INSERT INTO comments (body) VALUES ('in batch')", "INSERT INTO posts (title) VALUES ('x')"],
          "write",
        ),
      ).rejects.toThrow(/data_add on table posts/);
      expect(await count(c, "comments")).toBe(before);
      const tx = await c.transaction("write");
      await tx.execute("INSERT INTO comments (body) VALUES ('in tx')");
      await expect(tx.execute("UPDATE posts SET title = 'x'")).rejects.toThrow(/data_update on table posts/);
      await tx.commit();
      expect(await count(c, "comments")).toBe(before + 1);
    });
  },
);

describe("a token limited to named tables", () => {
  it("can't reach other tables through a view, a CTE, a subquery, RETURNING or a virtual table", async () => {
    const c = over("http", await limited([{ t: ["comments"], a: ["data_read", "data_add"] }]));
    expect(await count(c, "comments")).toBeGreaterThan(0);
    const refusals: Array<[string, RegExp]> = [
      ["SELECT * FROM secret", /data_read on table secret/],
      ["SELECT * FROM secret_view", /data_read on table secret/],
      ["WITH x AS (SELECT s FROM secret) SELECT * FROM x", /data_read on table secret/],
      ["SELECT body, (SELECT s FROM secret) FROM comments", /data_read on table secret/],
      ["INSERT INTO comments (body) SELECT s FROM secret", /data_read on table secret/],
      // A table-valued function is a virtual table, which no table name covers.
      ["SELECT value FROM json_each('[1, 2]')", /data_read on all tables/],
      ["ATTACH 'other' AS o", /don't extend to ATTACH/],
    ];
    for (const [statement, message] of refusals)
      await expect(c.execute(statement), statement).rejects.toThrow(message);
    // SQLite folds ASCII letters only: a rule for one name never covers another.
    await expect(c.execute('DELETE FROM "Comments"')).rejects.toThrow(/data_delete on table comments/);
    // Reading the rows it adds back is reading: RETURNING needs data_read, which this token has.
    const r = await c.execute("INSERT INTO comments (body) VALUES ('returned') RETURNING body");
    expect(r.rows[0]!.body).toBe("returned");
    const writeOnly = over("http", await limited([{ t: ["comments"], a: ["data_add"] }]));
    await expect(writeOnly.execute("INSERT INTO comments (body) VALUES ('r') RETURNING id")).rejects.toThrow(
      /data_read on table comments/,
    );
    expect((await writeOnly.execute("INSERT INTO comments (body) VALUES ('plain')")).rowsAffected).toBe(1);
  });

  it("runs a trigger's statements with the token's own rights", async () => {
    const c = over(
      "ws",
      await limited([
        { t: null, a: ["data_read"] },
        { t: ["notes"], a: ["data_add"] },
      ]),
    );
    const posts = await count(c, "posts");
    await expect(c.execute("INSERT INTO notes (n) VALUES ('fires')")).rejects.toThrow(
      /data_add on table posts/,
    );
    expect(await count(c, "notes")).toBe(0);
    const both = over("ws", await limited([{ t: ["notes", "posts"], a: ["data_add", "data_read"] }]));
    await both.execute("INSERT INTO notes (n) VALUES ('fires')");
    expect(await count(c, "posts")).toBe(posts + 1);
  });

  it("creates and drops the tables its schema rights name, and writes through them", async () => {
    const c = over(
      "ws",
      await limited([{ t: ["drafts"], a: ["schema_add", "schema_delete", "data_add", "data_read"] }]),
    );
    await c.execute("CREATE TABLE drafts (x)");
    await c.execute("INSERT INTO drafts VALUES (1)");
    expect(await count(c, "drafts")).toBe(1);
    await expect(c.execute("CREATE TABLE drafts2 (x)")).rejects.toThrow(/schema_add on table drafts2/);
    await c.execute("DROP TABLE drafts");
  });

  it("is checked in v3 cursor batches too", async () => {
    const token = await limited([{ t: null, a: ["data_read"] }]);
    const res = await fetch(`${db.urls.httpPath}v3/cursor`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({
        baton: null,
        batch: { steps: [{ stmt: { sql: "SELECT 1" } }, { stmt: { sql: "DELETE FROM posts" } }] },
      }),
    });
    expect(res.status).toBe(200);
    const lines = (await res.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const error = lines.find((l) => l.type === "step_error");
    expect(error?.error.message).toMatch(/data_delete on table posts/);
    expect(error?.error.code).toBe("FORBIDDEN");
  });

  it("is checked at a replica location too, whose reads otherwise run on the replica", async () => {
    const groups = `/v1/organizations/${db.org}/groups/default/locations/aws-eu-west-1`;
    expect((await db.user.api.post(groups)).status).toBe(200);
    expect((await db.user.api.get(`${groups}/wait`)).status).toBe(200);
    const url = `${h.url}/db/${db.org}/${db.name}@aws-eu-west-1/`;
    const c = createClient({ url, authToken: await limited([{ t: ["comments"], a: ["data_read"] }]) });
    clients.push(c);
    expect(await count(c, "comments")).toBeGreaterThan(0);
    await expect(c.execute("SELECT s FROM secret")).rejects.toThrow(/data_read on table secret/);
    await expect(c.execute("SELECT s FROM secret_view")).rejects.toThrow(/data_read on table secret/);
  });

  it("is refused by the routes that hand out the whole file", async () => {
    const token = await limited([{ t: ["comments"], a: ["data_read"] }]);
    for (const route of ["dump", "export", "info"]) {
      const r = await fetch(`${db.urls.httpPath}${route}`, { headers: { authorization: `Bearer ${token}` } });
      expect([401, 403], route).toContain(r.status);
      expect(((await r.json()) as { message: string }).message, route).toMatch(/table-level permissions/);
    }
    const pull = await fetch(`${db.urls.httpPath}pull-updates`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/protobuf" },
      body: new Uint8Array(),
    });
    expect(pull.status).toBe(403);
  });

  it("works in group tokens, and a read-only token stays read-only whatever its rules say", async () => {
    const base = `/v1/organizations/${db.org}/groups/default/auth/tokens`;
    const r = await db.user.api.post(base, {
      fine_grained_permissions: [{ t: ["posts"], a: ["data_read"] }],
    });
    expect(r.status, r.text).toBe(200);
    const c = over("http", r.body.jwt);
    expect(await count(c, "posts")).toBeGreaterThan(0);
    await expect(c.execute("SELECT * FROM comments")).rejects.toThrow(/data_read on table comments/);
    const ro = over("http", await limited([{ t: null, a: ["data_add"] }], "?authorization=read-only"));
    await expect(ro.execute("INSERT INTO posts (title) VALUES ('x')")).rejects.toThrow(/read-only/);
  });
});

describe("session settings", () => {
  it("can't be set by a limited token, even while a statement is only compiled", async () => {
    const c = over("http", await limited([{ t: ["chk"], a: ["data_add", "data_read"] }]));
    for (const statement of [
      "PRAGMA ignore_check_constraints = 1",
      "EXPLAIN PRAGMA ignore_check_constraints = 1",
    ])
      await expect(c.execute(statement), statement).rejects.toThrow(/setting a PRAGMA/);
    await expect(c.execute("INSERT INTO chk VALUES (-5)")).rejects.toThrow(/CHECK constraint failed/);
  });

  it("set by one request never hold for the next, whoever's token it brings", async () => {
    const owner = createClient({ url: db.urls.httpPath, authToken: db.token });
    clients.push(owner);
    await owner.execute("PRAGMA ignore_check_constraints = 1");
    const other = over("http", await limited([{ t: ["chk"], a: ["data_add", "data_read"] }]));
    await expect(other.execute("INSERT INTO chk VALUES (-6)")).rejects.toThrow(/CHECK constraint failed/);
    await expect(owner.execute("INSERT INTO chk VALUES (-7)")).rejects.toThrow(/CHECK constraint failed/);
  });
});

describe("minting a token with fine_grained_permissions", () => {
  const base = () => `/v1/organizations/${db.org}/databases/${db.name}/auth/tokens`;

  it("puts the rules in the token's perm claim, as Turso's template does", async () => {
    const jwt = await limited([
      { t: null, a: ["data_read"] },
      { t: ["comments"], a: ["data_add", "data_add"] },
    ]);
    const claims = JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString());
    expect(claims.perm).toEqual([
      { t: null, a: ["data_read"] },
      { t: ["comments"], a: ["data_add"] },
    ]);
    const plain = JSON.parse(Buffer.from((await limited([])).split(".")[1]!, "base64url").toString());
    expect(plain.perm).toBeUndefined();
  });

  it("refuses malformed rules and unknown actions with a 400 that says what to send", async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ t: ["x"] }, /must be a list of rules/],
      [[{ t: ["x"], a: ["data_insert"] }], /unknown action "data_insert".*data_add inserts rows/],
      [[{ t: ["x"], a: [] }], /must list at least one action/],
      [[{ t: "x", a: ["data_read"] }], /\.t must be a list of table names/],
      [[{ t: [""], a: ["data_read"] }], /\.t must be a list of table names/],
      [["data_read"], /must be an object/],
    ];
    for (const [rules, message] of cases) {
      const r = await db.user.api.post(base(), { fine_grained_permissions: rules });
      expect(r.status, JSON.stringify(rules)).toBe(400);
      expect(r.body.error, JSON.stringify(rules)).toMatch(message);
    }
  });

  it("is checked before anything a statement reads: pipelines refuse with FORBIDDEN in the step", async () => {
    const token = await limited([{ t: ["comments"], a: ["data_read"] }]);
    const r = await pipeline(db.urls.httpPath, token, {
      requests: [sql("SELECT * FROM posts"), sql("SELECT count(*) FROM comments"), { type: "close" }],
    });
    expect(r.status).toBe(200);
    expect(r.body.results[0].type).toBe("error");
    expect(r.body.results[0].error.code).toBe("FORBIDDEN");
    expect(r.body.results[1].type).toBe("ok");
  });
});
