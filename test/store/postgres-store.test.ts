import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/store/postgres.js";
import type { Repos, Store } from "../../src/store/store.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";

let server: PostgresServer;
let url: string;
const opened: Store[] = [];

const open = async () => {
  const s = await openPostgresStore(url, { poolSize: 4 });
  opened.push(s);
  return s;
};

const group = (id: string, name: string) => ({
  id,
  org_id: "o1",
  name,
  primary_location: "x",
  archived: 0,
  delete_protection: 0,
  created_at: "t",
  token_generation: 0,
});

async function seed(r: Repos): Promise<void> {
  await r.organizations.insert({
    id: "o1",
    slug: "acme",
    name: "Acme",
    type: "team",
    overages: 0,
    blocked_reads: 0,
    blocked_writes: 0,
    created_at: "t",
  });
  await r.groups.insert(group("g1", "one"));
  await r.groups.insert(group("g2", "two"));
}

const settled = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  server = await startPostgres();
});
afterAll(() => server.stop());
beforeEach(async () => {
  url = await server.newDatabase();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

describe("the PostgreSQL store", () => {
  it("serialises two transactions that lock the same group, and only those", async () => {
    const [a, b, c] = [await open(), await open(), await open()];
    await a.write(seed);
    const events: string[] = [];
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let holding = () => {};
    const held = new Promise<void>((r) => (holding = r));

    const first = a.write(async (r) => {
      await r.groups.lock("g1");
      holding();
      await gate;
      await r.groups.update("g1", { archived: 1 });
      events.push("first committed");
    });
    await held;
    const second = b.write(async (r) => {
      await r.groups.lock("g1");
      events.push("second locked");
      return (await r.groups.findById("g1"))?.archived;
    });
    try {
      // Another group's lock is independent.
      await c.write((r) => r.groups.lock("g2"));
      await settled(300);
      expect(events).toEqual([]);
    } finally {
      release();
    }
    // Once it holds the lock, the second sees what the first committed.
    expect(await second).toBe(1);
    await first;
    expect(events).toEqual(["first committed", "second locked"]);
  });

  it("keeps a write's changes from other connections until it commits", async () => {
    const [a, b] = [await open(), await open()];
    const user = { id: "u1", username: "ann", email: "a@x.io", is_admin: 0, created_at: "t" };
    let seenOutside: unknown = "not read";
    await a.write(async (r) => {
      await r.users.insert(user);
      expect(await r.users.findById("u1")).toEqual(user);
      seenOutside = await b.read((o) => o.users.findById("u1"));
    });
    expect(seenOutside).toBeUndefined();
    expect(await b.read((o) => o.users.findById("u1"))).toEqual(user);
  });

  it("parses bigint and numeric as numbers on its own pool only", async () => {
    const store = await open();
    expect(await store.read((r) => r.users.countAdmins())).toBe(0);
    expect(pg.types.getTypeParser(20, "text")("7")).toBe("7");
    const plain = new pg.Client({ connectionString: url });
    await plain.connect();
    try {
      const { rows } = await plain.query("select count(*) as n, sum(1::bigint) as s");
      expect(rows[0]).toEqual({ n: "1", s: "1" });
    } finally {
      await plain.end();
    }
  });

  it("rejects at open when the server is unreachable", async () => {
    await expect(openPostgresStore(url.replace(/:\d+\//, ":1/"))).rejects.toThrow();
  });
});
