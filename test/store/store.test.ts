import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UniqueViolationError } from "../../src/errors.js";
import { openSqliteStore } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/store.js";

let dir: string;
let store: Store;

const user = (id: string, username: string) => ({
  id,
  username,
  email: `${username}@x.io`,
  is_admin: 0,
  created_at: new Date().toISOString(),
});

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-store-"));
  store = await openSqliteStore(dir);
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the embedded SQLite store", () => {
  it("migrates once and reopens without migrating again", async () => {
    await store.write((r) => r.users.insert(user("u1", "kept")));
    await store.close();
    store = await openSqliteStore(dir);
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
});
