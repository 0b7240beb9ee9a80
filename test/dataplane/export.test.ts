import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken, setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
let dir: string;

const ROWS = [
  [1, "plain", 1.5, null],
  [2, 'it\'s "quoted"\nwith a line break\r\nand a \\n', 5.0, new Uint8Array([0, 1, 255])],
  [3, "ünïcödé 🐟", -0.25, new Uint8Array([])],
];

async function get(url: string, token: string | undefined): Promise<Response> {
  return fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
}

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  dir = await mkdtemp(path.join(tmpdir(), "shoal-export-"));
  const c = createClient({ url: db.urls.httpPath, authToken: db.token });
  await c.batch([
    "CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT, score REAL, data BLOB)",
    "CREATE TABLE calc (a INTEGER, doubled INTEGER GENERATED ALWAYS AS (a * 2) STORED)",
    "CREATE INDEX notes_body ON notes (body)",
    "CREATE VIEW high AS SELECT * FROM notes WHERE score > 1",
    "CREATE TRIGGER calc_guard BEFORE INSERT ON calc BEGIN SELECT RAISE(ABORT, 'no; negatives') WHERE NEW.a < 0; END",
    ...ROWS.map((args) => ({ sql: "INSERT INTO notes VALUES (?, ?, ?, ?)", args })),
    "INSERT INTO calc (a) VALUES (21)",
  ]);
  c.close();
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

function contentOf(file: string): unknown {
  const d = new Database(file, { readonly: true });
  try {
    return {
      notes: d.prepare("SELECT id, body, score, typeof(score), hex(data) FROM notes ORDER BY id").all(),
      calc: d.prepare("SELECT a, doubled FROM calc").all(),
      schema: d.prepare("SELECT type, name FROM sqlite_schema ORDER BY name").all(),
      seq: d.prepare("SELECT * FROM sqlite_sequence").all(),
    };
  } finally {
    d.close();
  }
}

describe("GET .../dump", () => {
  it("answers the database as SQL text that rebuilds the same rows, schema and sequences", async () => {
    const res = await get(`${db.urls.httpPath}dump`, db.token);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text.startsWith("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")).toBe(true);
    expect(text.endsWith("COMMIT;\n")).toBe(true);
    // One statement per line: line breaks in values are written with replace().
    expect(text).toContain("char(10)");
    expect(text).toContain('INSERT INTO "calc"("a") VALUES(21);');
    expect(text).toContain("5.0,");

    const rebuilt = path.join(dir, "from-dump.db");
    const d = new Database(rebuilt);
    d.exec(text);
    d.close();
    const original = await get(`${db.urls.httpPath}export`, db.token);
    const originalFile = path.join(dir, "original.db");
    await writeFile(originalFile, Buffer.from(await original.arrayBuffer()));
    expect(contentOf(rebuilt)).toEqual(contentOf(originalFile));
  });

  it("is served on the database's hostname too, with a read-only token", async () => {
    const ro = await mintToken(db.user, db.org, db.name, "?authorization=read-only");
    const res = await get(`${db.urls.httpHost}/dump`, ro);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("CREATE TABLE notes");
  });

  it("streams a large dump in pieces while writers carry on", async () => {
    const big = await setupDatabase(h, { user: db.user });
    const c = createClient({ url: big.urls.httpPath, authToken: big.token });
    await c.execute("CREATE TABLE t (v TEXT)");
    await c.execute(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO t SELECT printf('row %d', i) FROM n",
    );
    const res = await get(`${big.urls.httpPath}dump`, big.token);
    const reader = res.body!.getReader();
    const first = await reader.read();
    // The snapshot is taken: a write now must not show in the rest of the dump.
    await c.execute("INSERT INTO t VALUES ('written during the dump')");
    let text = Buffer.from(first.value!).toString();
    let pieces = 1;
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      text += Buffer.from(r.value).toString();
      pieces++;
    }
    expect(pieces).toBeGreaterThan(1);
    expect(text.match(/^INSERT INTO "t"/gm)?.length).toBe(20000);
    expect(text).not.toContain("written during the dump");
    c.close();
  });
});

describe("GET .../export", () => {
  it("answers a SQLite file with the same content, in rollback-journal mode", async () => {
    const res = await get(`${db.urls.httpPath}export`, db.token);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.sqlite3");
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(Number(res.headers.get("content-length"))).toBe(bytes.length);
    expect(bytes.subarray(0, 16).toString("latin1")).toBe("SQLite format 3\0");
    expect(bytes[18]).toBe(1);
    const file = path.join(dir, "exported.db");
    await writeFile(file, bytes);
    const content = contentOf(file) as { notes: unknown[]; calc: unknown[] };
    expect(content.notes).toHaveLength(3);
    expect(content.calc).toEqual([{ a: 21, doubled: 42 }]);
  });

  it("leaves no temporary file beside the database", async () => {
    await (await get(`${db.urls.httpHost}/export`, db.token)).arrayBuffer();
    const folder = path.join(h.dataDir, "locations", "aws-us-east-1");
    expect((await readdir(folder)).filter((f) => f.includes(".export-"))).toEqual([]);
  });
});

describe("refusals", () => {
  it("answers 401 without a token or with a bad one, 403 with another database's token", async () => {
    const other = await setupDatabase(h, { user: db.user });
    for (const route of ["dump", "export"]) {
      const none = await get(`${db.urls.httpPath}${route}`, undefined);
      expect(none.status).toBe(401);
      expect(((await none.json()) as { code: string }).code).toBe("AUTH_HEADER_NOT_FOUND");
      expect((await get(`${db.urls.httpPath}${route}`, "not-a-token")).status).toBe(401);
      const foreign = await get(`${db.urls.httpPath}${route}`, other.token);
      expect(foreign.status).toBe(403);
      expect(((await foreign.json()) as { code: string }).code).toBe("AUTH_DATABASE_MISMATCH");
    }
  });

  it("answers 404 for a database that doesn't exist, and 403 BLOCKED while reads are blocked", async () => {
    const missing = await get(`${h.url}/db/${db.org}/no-such-db/dump`, db.token);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe("DATABASE_NOT_FOUND");
    const blocked = await setupDatabase(h, { user: db.user });
    await db.user.api.patch(`/v1/organizations/${db.org}/databases/${blocked.name}/configuration`, {
      block_reads: true,
    });
    const res = await get(`${blocked.urls.httpPath}export`, blocked.token);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe("BLOCKED");
  });
});

describe("the database's http_url", () => {
  it("is the path form on the address the API was asked on, and a client can use it as is", async () => {
    const r = await db.user.api.get(`/v1/organizations/${db.org}/databases/${db.name}`);
    expect(r.body.database.http_url).toBe(db.urls.httpPath);
    const listed = await db.user.api.get(`/v1/organizations/${db.org}/databases`);
    expect(listed.body.databases[0].http_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/db\//);
    const c = createClient({ url: r.body.database.http_url, authToken: db.token });
    expect((await c.execute("SELECT count(*) AS n FROM notes")).rows[0]!.n).toBe(3);
    c.close();
  });
});
