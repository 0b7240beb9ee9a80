import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { UniqueViolationError } from "../../src/errors.js";
import type { DialectKind } from "../../src/store/dialect.js";
import { LibsqlKyselyDatabase, openControlPlaneFile } from "../../src/store/libsql-driver.js";
import { migrationProvider } from "../../src/store/migrations/index.js";
import { openPostgresStore } from "../../src/store/postgres.js";
import { openSqliteStore } from "../../src/store/sqlite.js";
import type { Repos, Store } from "../../src/store/store.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";

/** One store location (a data folder, a PostgreSQL database) that can be opened several times. */
interface Target {
  open(): Promise<Store>;
  /** A bare, unmigrated Kysely on the same location, for tests that drive migrations by hand. */
  bare(): Kysely<any>;
  dispose(): Promise<void>;
}

interface Backend {
  name: string;
  kind: DialectKind;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  target(): Promise<Target>;
}

const sqliteBackend: Backend = {
  name: "the embedded SQLite store",
  kind: "sqlite",
  setup: async () => {},
  teardown: async () => {},
  async target() {
    const dir = await mkdtemp(path.join(tmpdir(), "shoal-store-"));
    return {
      open: () => openSqliteStore(dir),
      bare: () =>
        new Kysely({
          dialect: new SqliteDialect({
            database: new LibsqlKyselyDatabase(openControlPlaneFile(path.join(dir, "control-plane.db"))),
          }),
        }),
      dispose: () => rm(dir, { recursive: true, force: true }),
    };
  },
};

function postgresBackend(): Backend {
  let server: PostgresServer | undefined;
  return {
    name: "the PostgreSQL store",
    kind: "postgres",
    async setup() {
      server = await startPostgres();
    },
    async teardown() {
      await server?.stop();
    },
    async target() {
      if (!server) throw new Error("the PostgreSQL server did not start");
      const url = await server.newDatabase();
      return {
        open: () => openPostgresStore(url),
        bare: () =>
          new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url }) }) }),
        dispose: async () => {},
      };
    },
  };
}

const user = (id: string, username: string) => ({
  id,
  username,
  email: `${username}@x.io`,
  is_admin: 0,
  created_at: new Date().toISOString(),
});

const org = (id: string, slug: string) => ({
  id,
  slug,
  name: slug,
  type: "team" as const,
  overages: 0,
  blocked_reads: 0,
  blocked_writes: 0,
  created_at: new Date().toISOString(),
});

const group = (id: string, orgId: string, name = "default") => ({
  id,
  org_id: orgId,
  name,
  primary_location: "x",
  archived: 0,
  delete_protection: 0,
  created_at: new Date().toISOString(),
  token_generation: 0,
});

const database = (id: string, orgId: string, groupId: string, name: string, label: string) => ({
  id,
  org_id: orgId,
  group_id: groupId,
  name,
  size_limit: null,
  block_reads: 0,
  block_writes: 0,
  allow_attach: 0,
  delete_protection: 0,
  created_at: new Date().toISOString(),
  hostname_label: label,
  token_generation: 0,
});

/** An organization with a group in location x and one database in it. */
async function seed(r: Repos): Promise<void> {
  await r.organizations.insert(org("o1", "acme"));
  await r.groups.insert(group("g1", "o1"));
  await r.groups.insertLocation({ group_id: "g1", location: "x", position: 0, added_at: "t" });
  await r.databases.insert(database("d1", "o1", "g1", "db", "db-acme"));
}

describe.each([sqliteBackend, postgresBackend()])("$name", (backend) => {
  let target: Target;
  let store: Store;
  const extra: Store[] = [];

  /** Another Store (its own connection or pool) on the same location, for real concurrency. */
  const another = async () => {
    const s = await target.open();
    extra.push(s);
    return s;
  };

  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());
  beforeEach(async () => {
    target = await backend.target();
    store = await target.open();
  });
  afterEach(async () => {
    await Promise.all([store, ...extra.splice(0)].map((s) => s.close()));
    await target.dispose();
  });

  it("migrates once and reopens without migrating again", async () => {
    await store.write((r) => r.users.insert(user("u1", "kept")));
    await store.close();
    store = await target.open();
    expect((await store.read((r) => r.users.list())).map((u) => u.username)).toEqual(["kept"]);
  });

  it("rolls back every write of a transaction that throws", async () => {
    await expect(
      store.write(async (r) => {
        await r.users.insert(user("u1", "first"));
        await r.users.insert(user("u2", "second"));
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await store.read((r) => r.users.list())).toEqual([]);
  });

  it("reports a unique violation as UniqueViolationError naming the rule", async () => {
    await store.write((r) => r.users.insert(user("u1", "taken")));
    const err = await store.write((r) => r.users.insert(user("u2", "taken"))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UniqueViolationError);
    expect((err as UniqueViolationError).constraint).toBe("username");
  });

  it("reports composite and primary-key violations as UniqueViolationError too", async () => {
    await store.write(seed);
    const dupName = store.write((r) => r.databases.insert(database("d2", "o1", "g1", "db", "other")));
    await expect(dupName).rejects.toThrow(new UniqueViolationError("database name"));
    const dupLabel = store.write(async (r) => {
      await r.organizations.insert(org("o2", "b-acme"));
      await r.groups.insert(group("g2", "o2"));
      await r.databases.insert(database("d3", "o2", "g2", "db", "db-acme"));
    });
    await expect(dupLabel).rejects.toBeInstanceOf(UniqueViolationError);
    const dupLocation = store.write((r) =>
      r.groups.insertLocation({ group_id: "g1", location: "x", position: 1, added_at: "t" }),
    );
    await expect(dupLocation).rejects.toThrow(new UniqueViolationError("group location"));
    expect(await store.read((r) => r.organizations.findById("o2"))).toBeUndefined();
  });

  it("keeps a transaction usable after a caught unique violation", async () => {
    // The domain does this: catch the conflict, then look up why (createDatabase).
    await store.write((r) => r.users.insert(user("u1", "taken")));
    const why = await store.write(async (r) => {
      await r.users.insert(user("u2", "kept"));
      const err = await r.users.insert(user("u3", "taken")).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UniqueViolationError);
      await r.users.insert(user("u4", "also-kept"));
      return (await r.users.findByUsername("taken"))?.id;
    });
    expect(why).toBe("u1");
    expect((await store.read((r) => r.users.list())).map((u) => u.id).sort()).toEqual(["u1", "u2", "u4"]);
  });

  it("lets exactly one of several concurrent writers take a unique name", async () => {
    // PostgreSQL: separate pools, so the transactions truly overlap. SQLite: one Store, as Shoal runs
    // it; libsql waits for a lock synchronously, so a second connection in this process would block
    // the event loop the holder needs to commit.
    const others = backend.kind === "postgres" ? () => another() : async () => store;
    const stores = [store, ...(await Promise.all([1, 2, 3, 4, 5].map(others)))];
    const results = await Promise.allSettled(
      stores.map((s, i) =>
        s.write(async (r) => {
          await r.users.insert(user(`u${i}`, "contended"));
          await r.users.insert(user(`v${i}`, `unique-${i}`));
        }),
      ),
    );
    const failures = results.filter((r) => r.status === "rejected").map((r) => r.reason as unknown);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(failures).toHaveLength(stores.length - 1);
    for (const e of failures) expect(e).toBeInstanceOf(UniqueViolationError);
    // The losers' other inserts were rolled back with them.
    expect(await store.read((r) => r.users.list())).toHaveLength(2);
  });

  it("binds JS booleans safely (libsql aborts the process on a raw boolean bind)", async () => {
    await store.write((r) => r.users.insert({ ...user("u1", "flag"), is_admin: true as unknown as number }));
    expect((await store.read((r) => r.users.findById("u1")))?.is_admin).toBe(1);
  });

  it("cascades an organization's deletion to its groups, databases and memberships", async () => {
    const now = new Date().toISOString();
    await store.write(async (r) => {
      await r.users.insert(user("u1", "owner"));
      await r.organizations.insert({
        id: "o1",
        slug: "acme",
        name: "Acme",
        type: "team",
        overages: 0,
        blocked_reads: 0,
        blocked_writes: 0,
        created_at: now,
      });
      await r.members.insert({ org_id: "o1", user_id: "u1", role: "owner", created_at: now });
      await r.groups.insert({
        id: "g1",
        org_id: "o1",
        name: "default",
        primary_location: "x",
        archived: 0,
        delete_protection: 0,
        created_at: now,
        token_generation: 0,
      });
      await r.groups.insertLocation({ group_id: "g1", location: "x", position: 0, added_at: now });
      await r.databases.insert({
        id: "d1",
        org_id: "o1",
        group_id: "g1",
        name: "db",
        size_limit: null,
        block_reads: 0,
        block_writes: 0,
        allow_attach: 0,
        delete_protection: 0,
        created_at: now,
        hostname_label: "db-acme",
        token_generation: 0,
      });
    });
    await store.write((r) => r.organizations.delete("o1"));
    expect(await store.read((r) => r.databases.findById("d1"))).toBeUndefined();
    expect(await store.read((r) => r.groups.findById("g1"))).toBeUndefined();
    expect(await store.read((r) => r.members.find("o1", "u1"))).toBeUndefined();
    expect(await store.read((r) => r.users.findById("u1"))).toBeDefined();
  });

  it("returns usage counters and their sums as numbers", async () => {
    await store.write(seed);
    const day = { dbId: "d1", orgId: "o1", rowsRead: 5, rowsWritten: 2, queries: 1 };
    await store.write((r) => r.usage.add([{ ...day, day: "2024-05-01" }]));
    await store.write((r) =>
      r.usage.add([
        { ...day, day: "2024-05-01", rowsRead: 2 ** 40 },
        { ...day, day: "2024-05-02" },
        { ...day, day: "2024-06-01" },
      ]),
    );
    const totals = await store.read((r) => r.usage.totalsFor("d1", "2024-05-01", "2024-05-31"));
    expect(totals).toStrictEqual({ rows_read: 2 ** 40 + 10, rows_written: 6, queries: 3 });
    const none = await store.read((r) => r.usage.totalsFor("d1", "2020-01-01", "2020-01-31"));
    expect(none).toStrictEqual({ rows_read: 0, rows_written: 0, queries: 0 });

    const q = (query: string, rowsRead: number, rowsWritten: number) => ({
      dbId: "d1",
      query,
      count: 1,
      rowsRead,
      rowsWritten,
      totalMs: 1.5,
    });
    await store.write((r) =>
      r.usage.addQueryStats([q("a", 1, 1), q("b", 10, 0), q("c", 0, 3), q("a", 1, 1)]),
    );
    await store.write((r) => r.usage.addQueryStats([q("b", 10, 0), { ...q("gone", 1, 1), dbId: "nope" }]));
    const top = await store.read((r) => r.usage.topQueries("d1", 2));
    expect(top).toStrictEqual([
      { db_id: "d1", query: "b", count: 2, rows_read: 20, rows_written: 0, total_ms: 3 },
      { db_id: "d1", query: "a", count: 2, rows_read: 2, rows_written: 2, total_ms: 3 },
    ]);
  });

  it("returns counts, maxima, pages and audit ids as numbers", async () => {
    await store.write(async (r) => {
      await seed(r);
      await r.users.insert({ ...user("u1", "root"), is_admin: 1 });
      await r.members.insert({ org_id: "o1", user_id: "u1", role: "owner", created_at: "t" });
      await r.groups.insertLocation({ group_id: "g1", location: "y", position: 1, added_at: "t" });
      for (let i = 0; i < 5; i++) {
        await r.audit.insert({
          org_id: "o1",
          code: `c${i}`,
          message: "m",
          origin: "test",
          author: "root",
          data: "{}",
          created_at: "t",
        });
      }
    });
    await store.write((r) => r.databases.bumpTokenGeneration("d1"));
    const got = await store.read(async (r) => ({
      admins: await r.users.countAdmins(),
      owners: await r.members.countOwners("o1"),
      soleOwned: await r.members.teamOrgsSolelyOwnedBy("u1"),
      next: await r.groups.nextLocationPosition("g1"),
      nextEmpty: await r.groups.nextLocationPosition("nope"),
      locations: Object.fromEntries(await r.groups.locationsOf(["g1", "nope"])),
      none: (await r.groups.locationsOf([])).size,
      count: await r.audit.count("o1"),
      page: await r.audit.list("o1", 2, 1),
      db: await r.databases.findForDataPlane({ label: "db-acme" }),
    }));
    expect(got).toMatchObject({
      admins: 1,
      owners: 1,
      soleOwned: [{ id: "o1", slug: "acme" }],
      next: 2,
      nextEmpty: 0,
      locations: { g1: ["x", "y"], nope: [] },
      none: 0,
      count: 5,
      db: { token_generation: 1, group_token_generation: 0, org_slug: "acme", group_name: "default" },
    });
    expect(got.page.map((e) => e.code)).toEqual(["c3", "c2"]);
    expect(got.page.every((e) => typeof e.id === "number")).toBe(true);
  });

  it("backfills hostname labels when migrating a database created before them", async () => {
    const fresh = await backend.target();
    let migrated: Store | undefined;
    try {
      const db = fresh.bare();
      const migrator = new Migrator({ db, provider: migrationProvider(backend.kind) });
      expect((await migrator.migrateTo("0001-initial")).error).toBeUndefined();
      await sql`insert into organizations (id, slug, name, type, created_at) values ('o1', 'acme', 'A', 'team', 't')`.execute(
        db,
      );
      await sql`insert into groups (id, org_id, name, primary_location, created_at) values ('g1', 'o1', 'default', 'x', 't')`.execute(
        db,
      );
      await sql`insert into databases (id, org_id, group_id, name, created_at) values ('d1', 'o1', 'g1', 'db', 't')`.execute(
        db,
      );
      await db.destroy();
      migrated = await fresh.open();
      expect(await migrated.read((r) => r.databases.findById("d1"))).toMatchObject({
        hostname_label: "db-acme",
        token_generation: 0,
      });
    } finally {
      await migrated?.close();
      await fresh.dispose();
    }
  });
});
