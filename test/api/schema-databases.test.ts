import path from "node:path";
import { createClient, type Client as SqlClient } from "@libsql/client";
import { createClient as createApiClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostedDatabases } from "../../src/engine/hosted-databases.js";
import { InstanceFiles } from "../../src/engine/instance-files.js";
import { readSchema, schemaFingerprint } from "../../src/engine/schema-copy.js";
import { schemaJournal } from "../../src/hosting/schema-propagation.js";
import { mintToken } from "../helpers/dataplane.js";
import { createDatabase, createGroup, createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;
let org: string;
const opened: SqlClient[] = [];
const dbs = () => `/v1/organizations/${org}/databases`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  org = u.username;
  await createGroup(u, org, "default");
  await createGroup(u, org, "tenants", "aws-eu-west-1");
});
afterAll(async () => {
  for (const c of opened) c.close();
  await h.close();
});

async function sql(name: string): Promise<SqlClient> {
  const c = createClient({ url: `${h.url}/db/${org}/${name}/`, authToken: await mintToken(u, org, name) });
  opened.push(c);
  return c;
}

async function columns(c: SqlClient, table: string): Promise<string[]> {
  return (await c.execute(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`)).rows.map((r) =>
    String(r.name),
  );
}

async function objects(c: SqlClient): Promise<string[]> {
  const r = await c.execute("SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name");
  return r.rows.map((x) => String(x.name));
}

/** Waits until `check` holds: schema changes reach the databases following a schema in the background. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error(`never happened: ${what}`);
}

describe("schema databases and the databases following them", () => {
  let parent: SqlClient;
  let child: SqlClient;

  it("creates a schema database, listed with type=schema", async () => {
    const r = await u.api.post(dbs(), { name: "tenant-schema", group: "default", is_schema: true });
    expect(r.status, r.text).toBe(200);
    const got = (await u.api.get(`${dbs()}/tenant-schema`)).body.database;
    expect(got.is_schema).toBe(true);
    expect(got.schema).toBe("");
    const listed = await u.api.get(`${dbs()}?type=schema`);
    expect(listed.body.databases.map((d: { Name: string }) => d.Name)).toEqual(["tenant-schema"]);
    parent = await sql("tenant-schema");
    await parent.batch(
      [
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)",
        "CREATE VIEW names AS SELECT name FROM users",
        "INSERT INTO users (name) VALUES ('schema row')",
      ],
      "write",
    );
  });

  it("gives a new follower the schema database's schema, without its rows", async () => {
    const r = await u.api.post(dbs(), { name: "tenant-a", group: "tenants", schema: "tenant-schema" });
    expect(r.status, r.text).toBe(200);
    child = await sql("tenant-a");
    expect(await objects(child)).toEqual(["names", "users"]);
    expect((await child.execute("SELECT count(*) AS n FROM users")).rows[0]!.n).toBe(0);
    await child.execute("INSERT INTO users (name) VALUES ('tenant row')");
    const got = (await u.api.get(`${dbs()}/tenant-a`)).body.database;
    expect(got.schema).toBe("tenant-schema");
    expect(got.is_schema).toBe(false);
    const listed = await u.api.get(`${dbs()}?schema=tenant-schema`);
    expect(listed.body.databases.map((d: { Name: string }) => d.Name)).toEqual(["tenant-a"]);
  });

  it("passes DDL committed on the schema database on to every follower, keeping their rows", async () => {
    await u.api.post(dbs(), { name: "tenant-b", group: "default", schema: "tenant-schema" });
    const b = await sql("tenant-b");
    await parent.execute("ALTER TABLE users ADD COLUMN email TEXT");
    await parent.batch(
      [
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER)",
        "CREATE INDEX orders_user ON orders (user_id)",
      ],
      "write",
    );
    for (const c of [child, b]) {
      await eventually(
        async () => (await objects(c)).includes("orders_user"),
        "the index reaches a follower",
      );
      expect(await columns(c, "users")).toEqual(["id", "name", "email"]);
    }
    expect((await child.execute("SELECT name FROM users")).rows.map((r) => r.name)).toEqual(["tenant row"]);
  });

  it("doesn't pass on DDL that was rolled back", async () => {
    const tx = await parent.transaction("write");
    await tx.execute("CREATE TABLE scratch (v)");
    await tx.rollback();
    await parent.execute("CREATE TABLE kept (v)");
    await eventually(
      async () => (await objects(child)).includes("kept"),
      "the committed table reaches a follower",
    );
    expect(await objects(child)).not.toContain("scratch");
  });

  it("doesn't pass on DDL undone by ROLLBACK TO a savepoint, and passes on what the transaction kept", async () => {
    const tx = await parent.transaction("write");
    await tx.execute("CREATE TABLE before_savepoint (v)");
    await tx.execute("SAVEPOINT sp1");
    await tx.execute("CREATE TABLE undone (v)");
    await tx.execute("ROLLBACK TO sp1");
    await tx.execute("RELEASE sp1");
    await tx.execute("CREATE TABLE after_savepoint (v)");
    await tx.commit();
    await eventually(
      async () => (await objects(child)).includes("after_savepoint"),
      "the kept tables reach a follower",
    );
    expect(await objects(child)).toContain("before_savepoint");
    expect(await objects(child)).not.toContain("undone");
    // Later changes still go through: the journal holds nothing a follower can't take.
    await parent.execute("CREATE TABLE later (v)");
    await eventually(
      async () => (await objects(child)).includes("later"),
      "a later change reaches a follower",
    );
  });

  it("refuses DDL run on a follower itself, naming the schema database", async () => {
    await expect(child.execute("CREATE TABLE mine (v)")).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringMatching(/follows the schema of schema database tenant-schema/),
    });
    // Data is the follower's own.
    await child.execute("INSERT INTO orders (user_id) VALUES (1)");
  });

  it("records a change a follower can't take in the audit log, and leaves that follower as it was", async () => {
    await child.execute(
      "INSERT INTO users (name, email) VALUES ('x', 'same@example.com'), ('y', 'same@example.com')",
    );
    await parent.execute("CREATE UNIQUE INDEX users_email ON users (email)");
    const b = await sql("tenant-b");
    await eventually(
      async () => (await objects(b)).includes("users_email"),
      "the index reaches the other follower",
    );
    await eventually(async () => {
      const log = await u.api.get(`/v1/organizations/${org}/audit-logs`);
      return log.body.audit_logs.some((e: { code: string }) => e.code === "db-schema-migration-failed");
    }, "the failure is recorded");
    const log = await u.api.get(`/v1/organizations/${org}/audit-logs`);
    const entry = log.body.audit_logs.find((e: { code: string }) => e.code === "db-schema-migration-failed");
    expect(entry.message).toMatch(/could not be applied to database tenant-a: UNIQUE constraint failed/);
    expect(entry.data.statements).toEqual(["CREATE UNIQUE INDEX users_email ON users (email)"]);
    expect(await objects(child)).not.toContain("users_email");
    expect((await child.execute("SELECT count(*) AS n FROM users")).rows[0]!.n).toBe(3);
  });

  it("brings a follower up to date after a restart when it missed a journaled change", async () => {
    const { deps } = h.shoal;
    const parentRow = (await u.api.get(`${dbs()}/tenant-schema`)).body.database;
    const placed = await deps.store.read((r) => r.databases.findById(parentRow.DbId));
    // A change committed and journaled, whose propagation never ran: the process stopped between
    // the two. It is made here with the engine itself, while the node is stopped.
    await h.restart(async () => {
      const files = new InstanceFiles(path.join(h.dataDir, "locations"));
      const engine = new HostedDatabases({ maxOpen: 4, synchronous: "NORMAL" }, files);
      const hosted = engine.of(placed!.primary_location, placed!.id);
      const conn = hosted.checkout();
      conn.exec("CREATE TABLE added_offline (v)");
      hosted.afterWrite(conn);
      schemaJournal({ files }, placed!).append({
        at: Date.now(),
        statements: ["CREATE TABLE added_offline (v)"],
        fingerprint: schemaFingerprint(readSchema(conn)),
      });
      hosted.checkin(conn);
      await engine.closeAll();
    });
    const b = createClient({
      url: `${h.url}/db/${org}/tenant-b/`,
      authToken: await mintToken(u, org, "tenant-b"),
    });
    opened.push(b);
    await eventually(async () => (await objects(b)).includes("added_offline"), "the missed change arrives");
  });
});

describe("schema databases through the official TS client (@tursodatabase/api)", () => {
  it("creates a schema database and a follower, and lists them by type and by schema", async () => {
    const turso = createApiClient({ org, token: u.token, baseUrl: h.apiBase });
    await turso.databases.create("ts-schema", { group: "default", is_schema: true });
    await turso.databases.create("ts-follower", { group: "default", schema: "ts-schema" });
    const schemas = (await turso.databases.list({ type: "schema" })).map((d) => d.name);
    expect(schemas).toContain("ts-schema");
    expect(schemas).not.toContain("ts-follower");
    const followers = await turso.databases.list({ schema: "ts-schema" });
    expect(followers.map((d) => [d.name, d.schema, d.is_schema])).toEqual([
      ["ts-follower", "ts-schema", false],
    ]);
    await expect(
      turso.databases.create("ts-both", { group: "default", is_schema: true, schema: "ts-schema" } as never),
    ).rejects.toThrow(/cannot both be provided/);
  });
});

describe("creating followers and deleting schema databases", () => {
  it("refuses is_schema together with schema, and a schema with a seed", async () => {
    const both = await u.api.post(dbs(), {
      name: "both",
      group: "default",
      is_schema: true,
      schema: "tenant-schema",
    });
    expect(both.status).toBe(400);
    expect(both.body.error).toMatch(/is_schema and schema can't both be set/);
    const seeded = await u.api.post(dbs(), {
      name: "seeded",
      group: "default",
      schema: "tenant-schema",
      seed: { type: "database", name: "tenant-a" },
    });
    expect(seeded.status).toBe(400);
    expect(seeded.body.error).toMatch(/can't have a seed too/);
  });

  it("refuses a schema that isn't a schema database, and answers not found for one that doesn't exist", async () => {
    await createDatabase(u, org, "plain");
    const plain = await u.api.post(dbs(), { name: "follower", group: "default", schema: "plain" });
    expect(plain.status).toBe(400);
    expect(plain.body.error).toMatch(/database plain is not a schema database/);
    const missing = await u.api.post(dbs(), { name: "follower", group: "default", schema: "ghost" });
    expect(missing.status).toBe(404);
    expect((await u.api.get(`${dbs()}/follower`)).status).toBe(404);
  });

  it("refuses to delete a schema database while databases follow it", async () => {
    await u.api.post(dbs(), { name: "lonely-schema", group: "default", is_schema: true });
    await u.api.post(dbs(), { name: "lonely-child", group: "default", schema: "lonely-schema" });
    const r = await u.api.delete(`${dbs()}/lonely-schema`);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/while databases follow its schema \(lonely-child\)/);
    expect((await u.api.delete(`${dbs()}/lonely-child`)).status).toBe(200);
    expect((await u.api.delete(`${dbs()}/lonely-schema`)).status).toBe(200);
  });
});
