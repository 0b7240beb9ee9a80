import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliHarness } from "../helpers/cli.js";

let h: CliHarness;

/** Every row of the source, in a form two databases can be compared by. */
const CONTENT = "SELECT id, body, typeof(score) AS t, score, hex(raw) AS raw FROM items ORDER BY id";

beforeAll(async () => {
  h = await CliHarness.start();
  await h.ok(["db", "create", "source"]);
  await h.ok(["db", "shell", "source"], {
    input: [
      "CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT, score REAL, raw BLOB);",
      "CREATE INDEX items_body ON items (body);",
      "CREATE VIEW scored AS SELECT * FROM items WHERE score IS NOT NULL;",
      "INSERT INTO items (body, score, raw) VALUES ('plain', 1.0, x'00'), ('it''s\nmulti-line', NULL, NULL), ('🐟', -2.5, x'');",
      // Enough rows for a file of several hundred kilobytes.
      "INSERT INTO items (body, score) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) SELECT printf('row %05d %s', i, hex(randomblob(40))), i / 3.0 FROM n;",
    ].join("\n"),
  });
});
afterAll(() => h?.close());

describe("export and import of a SQLite file", () => {
  it("gives a database with identical rows", async () => {
    const file = path.join(h.home, "exported.db");
    const out = await h.json(["db", "export", "source", "--output", file]);
    expect(out).toMatchObject({ database: "source", file, bytes: expect.any(Number) });
    const local = new Database(file, { readonly: true });
    expect((local.prepare("SELECT count(*) AS n FROM items").get() as { n: number }).n).toBe(5003);
    local.close();

    const imported = await h.ok(["db", "import", "copy", file]);
    expect(imported).toContain(`Imported ${file} (SQLite file`);
    expect(imported).toContain(`into new database copy.\nURL: ${h.url}/db/admin/copy/`);
    const [a, b] = await Promise.all([
      h.json(["db", "shell", "source", CONTENT]),
      h.json(["db", "shell", "copy", CONTENT]),
    ]);
    expect(b).toEqual(a);
    expect(a).toHaveLength(5003);
  });

  it("writes <name>.db by default and never overwrites a file unasked", async () => {
    expect(await h.ok(["db", "export", "source"])).toMatch(
      /^Exported source to source\.db \(\d+ bytes\)\.\n$/,
    );
    expect(existsSync(path.join(h.home, "source.db"))).toBe(true);
    const err = await h.fails(["db", "export", "source"]);
    expect(err).toContain("source.db already exists");
    expect(err).toContain("--overwrite");
    await h.ok(["db", "export", "source", "--overwrite"]);
  });

  it("refuses a file with unsaved WAL changes, and a name that is taken, leaving nothing behind", async () => {
    const file = path.join(h.home, "wal.db");
    const d = new Database(file);
    d.exec(
      "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (v); INSERT INTO t VALUES (1)",
    );
    const err = await h.fails(["db", "import", "from-wal", file]);
    d.close();
    expect(err).toContain("has unsaved changes in");
    expect(err).toContain("wal_checkpoint(TRUNCATE)");
    const taken = await h.fails(["db", "import", "source", path.join(h.home, "exported.db")]);
    expect(taken).toContain("database with name source already exists");
    expect(taken).toContain("shoal db shell source --file");
    const names = (await h.json<any[]>(["db", "list"])).map((x) => x.Name);
    expect(names).not.toContain("from-wal");
  });
});

describe("dump and import of SQL text", () => {
  it("prints the dump and gives a database with identical rows from it", async () => {
    const dump = await h.ok(["db", "dump", "source"]);
    expect(dump.startsWith("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")).toBe(true);
    expect(dump).toContain("CREATE VIEW scored AS");
    const file = path.join(h.home, "source.sql");
    expect(await h.json(["db", "dump", "source", "--output", file])).toMatchObject({ file });
    expect(readFileSync(file, "utf8")).toBe(dump);

    const imported = await h.ok(["db", "import", "from-dump", file]);
    expect(imported).toContain("(SQL dump,");
    const [a, b] = await Promise.all([
      h.json(["db", "shell", "source", CONTENT]),
      h.json(["db", "shell", "from-dump", CONTENT]),
    ]);
    expect(b).toEqual(a);
    const schema = await h.ok(["db", "shell", "from-dump", ".schema"]);
    expect(schema).toContain("CREATE INDEX items_body ON items (body);");
  });

  it("refuses a dump that fails, creating nothing", async () => {
    const file = path.join(h.home, "broken.sql");
    writeFileSync(file, "CREATE TABLE a (x);\nINSERT INTO nowhere VALUES (1);\n");
    const err = await h.fails(["db", "import", "broken", file]);
    expect(err).toContain("no such table: nowhere");
    expect(err).toContain("fix the dump and import it again");
    expect((await h.json<any[]>(["db", "list"])).map((x) => x.Name)).not.toContain("broken");
    expect(await h.fails(["db", "import", "x", path.join(h.home, "absent.sql")])).toContain("cannot read");
  });
});

describe("db migrate", () => {
  it("applies numbered files in order, once each, recording them in the database", async () => {
    await h.ok(["db", "create", "app"]);
    const dir = path.join(h.home, "migrations");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "0002_add_email.sql"), "ALTER TABLE users ADD COLUMN email TEXT;\n");
    writeFileSync(
      path.join(dir, "0001_users.sql"),
      "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);\n-- no semicolon after the last one\nINSERT INTO users (name) VALUES ('first')",
    );
    writeFileSync(path.join(dir, "10_index.sql"), "CREATE INDEX users_email ON users (email);");
    writeFileSync(path.join(dir, "README.md"), "not a migration");

    expect(await h.json(["db", "migrate", "app", dir, "--dry-run"])).toEqual({
      applied: [],
      pending: ["0001_users.sql", "0002_add_email.sql", "10_index.sql"],
      already_applied: [],
    });
    expect(await h.ok(["db", "migrate", "app", dir])).toBe(
      "Applied 0001_users.sql\nApplied 0002_add_email.sql\nApplied 10_index.sql\n3 applied, 0 already applied before.\n",
    );
    expect(await h.json(["db", "migrate", "app", dir])).toEqual({
      applied: [],
      pending: [],
      already_applied: ["0001_users.sql", "0002_add_email.sql", "10_index.sql"],
    });
    const recorded = await h.json([
      "db",
      "shell",
      "app",
      "SELECT id, name FROM shoal_migrations ORDER BY id",
    ]);
    expect(recorded).toEqual([
      { id: 1, name: "0001_users.sql" },
      { id: 2, name: "0002_add_email.sql" },
      { id: 3, name: "10_index.sql" },
    ]);
    expect(await h.json(["db", "shell", "app", "SELECT name, email FROM users"])).toEqual([
      { name: "first", email: null },
    ]);
  });

  it("rolls back a failing migration whole and stops there", async () => {
    await h.ok(["db", "create", "app2"]);
    const dir = path.join(h.home, "migrations2");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "1_ok.sql"), "CREATE TABLE a (x);");
    writeFileSync(
      path.join(dir, "2_bad.sql"),
      "CREATE TABLE b (x);\nINSERT INTO a VALUES (1);\nINSERT INTO missing VALUES (1);",
    );
    writeFileSync(path.join(dir, "3_later.sql"), "CREATE TABLE c (x);");
    const err = await h.fails(["db", "migrate", "app2", dir]);
    expect(err).toContain("migration 2_bad.sql failed at line 3: SQL input error: no such table: missing");
    expect(err).toContain("it was rolled back and the ones after it were not applied");
    expect(err).toContain("applied before it: 1_ok.sql");
    const tables = await h.ok(["db", "shell", "app2", ".tables"]);
    expect(tables).toBe("a\nshoal_migrations\n");
    expect(await h.json(["db", "shell", "app2", "SELECT count(*) AS n FROM a"])).toEqual([{ n: 0 }]);
  });

  it("refuses a folder without migrations, or two files with one number", async () => {
    const empty = path.join(h.home, "empty");
    mkdirSync(empty);
    expect(await h.fails(["db", "migrate", "app", empty])).toContain("holds no numbered .sql files");
    writeFileSync(path.join(empty, "1_a.sql"), "SELECT 1;");
    writeFileSync(path.join(empty, "001_b.sql"), "SELECT 1;");
    expect(await h.fails(["db", "migrate", "app", empty])).toMatch(/have the same number/);
    expect(await h.fails(["db", "migrate", "app", path.join(h.home, "nope")])).toContain(
      "cannot read the folder",
    );
  });
});
