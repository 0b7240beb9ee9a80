import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
});
afterAll(() => h.close());

describe("libSQL's own SQL", () => {
  it("stores F32_BLOB vectors and searches them by distance and with a vector index", async () => {
    const c = createClient({ url: db.urls.httpPath, authToken: db.token });
    await c.batch(
      [
        "CREATE TABLE docs (id INTEGER PRIMARY KEY, title TEXT, emb F32_BLOB(3))",
        "CREATE INDEX docs_emb ON docs (libsql_vector_idx(emb))",
        "INSERT INTO docs (title, emb) VALUES ('east', vector32('[1, 0, 0]'))",
        "INSERT INTO docs (title, emb) VALUES ('north', vector32('[0, 1, 0]'))",
        "INSERT INTO docs (title, emb) VALUES ('north-east', vector32('[0.7, 0.7, 0]'))",
      ],
      "write",
    );
    const near = await c.execute(
      "SELECT title, vector_distance_cos(emb, vector32('[1, 0.1, 0]')) AS d FROM docs ORDER BY d LIMIT 2",
    );
    expect(near.rows.map((r) => r.title)).toEqual(["east", "north-east"]);
    const topK = await c.execute(
      "SELECT d.title FROM vector_top_k('docs_emb', vector32('[0, 1, 0.1]'), 1) AS k JOIN docs d ON d.rowid = k.id",
    );
    expect(topK.rows.map((r) => r.title)).toEqual(["north"]);
    const extracted = await c.execute("SELECT vector_extract(emb) AS v FROM docs WHERE title = 'east'");
    expect(JSON.parse(String(extracted.rows[0]!.v))).toEqual([1, 0, 0]);
    c.close();
  });

  it("alters a column in place with ALTER TABLE ... ALTER COLUMN", async () => {
    const c = createClient({ url: db.urls.wsPath, authToken: db.token });
    await c.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT)");
    await c.execute("ALTER TABLE people ALTER COLUMN name TO name TEXT NOT NULL DEFAULT 'anonymous'");
    await c.execute("INSERT INTO people (id) VALUES (1)");
    expect((await c.execute("SELECT name FROM people")).rows[0]!.name).toBe("anonymous");
    await expect(c.execute("INSERT INTO people (id, name) VALUES (2, NULL)")).rejects.toMatchObject({
      code: "SQLITE_CONSTRAINT",
    });
    c.close();
  });
});

describe("ready when created", () => {
  it("serves the first query the instant create returns, every time", async () => {
    for (let i = 0; i < 15; i++) {
      const name = `instant-${i}`;
      const created = await db.user.api.post(`/v1/organizations/${db.org}/databases`, {
        name,
        group: "default",
      });
      expect(created.status).toBe(200);
      const token = await db.user.api.post(`/v1/organizations/${db.org}/databases/${name}/auth/tokens`);
      const c = createClient({ url: `${h.url}/db/${db.org}/${name}/`, authToken: token.body.jwt });
      expect((await c.execute("SELECT 1 AS one")).rows[0]!.one).toBe(1);
      c.close();
    }
  });
});
