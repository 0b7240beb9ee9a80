/**
 * Recovering deleted databases and groups (Turso's v3 recovery routes): a deletion frees the
 * name and stops the data plane at once, the database stays restorable with its rows, history,
 * settings and encryption for the window, and the sweep removes it after. Real sockets, real
 * files, both stores.
 */
import { existsSync, readdirSync, renameSync } from "node:fs";
import path from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepDeleted } from "../../src/domain/databases/sweep-deleted.js";
import { newKey } from "../encryption/helpers.js";
import { addMember, createGroup, createTeam, createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let owner: TestUser;
let member: TestUser;
let team: string;
let orgId: string;
const v1 = (p = "") => `/v1/organizations/${team}${p}`;
const v3 = (p = "") => `/v3/organizations/${orgId}${p}`;
const kept = (id: string) => path.join(h.dataDir, "deleted", `${id}.db`);

async function makeDatabase(name: string, rows: number, group = "default", key?: string) {
  const body = { name, group, ...(key ? { remote_encryption: { encryption_key: key } } : {}) };
  const r = await owner.api.post(v1("/databases"), body);
  expect(r.status, r.text).toBe(200);
  const token = (await owner.api.post(v1(`/databases/${name}/auth/tokens`))).body.jwt as string;
  const c = sql(name, token, key);
  await c.execute("CREATE TABLE items (n INTEGER)");
  for (let i = 1; i <= rows; i++) await c.execute({ sql: "INSERT INTO items VALUES (?)", args: [i] });
  c.close();
  return { id: r.body.database.DbId as string, token };
}

function sql(name: string, token: string, key?: string) {
  return createClient({
    url: `${h.url}/db/${team}/${name}/`,
    authToken: token,
    ...(key ? { remoteEncryptionKey: key } : {}),
  });
}

async function count(name: string, key?: string) {
  const token = (await owner.api.post(v1(`/databases/${name}/auth/tokens`))).body.jwt as string;
  const c = sql(name, token, key);
  try {
    return Number((await c.execute("SELECT count(*) AS n FROM items")).rows[0]!.n);
  } finally {
    c.close();
  }
}

const deletedNames = async () =>
  ((await owner.api.get(v3("/databases?deleted=true"))).body.databases as Array<{ Name: string }>).map(
    (d) => d.Name,
  );

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  member = await createUser(h);
  team = await createTeam(owner);
  await addMember(owner, team, member.username, "member");
  await createGroup(owner, team, "default", "aws-us-east-1");
  orgId = (await owner.api.get(v1())).body.organization.id;
});
afterAll(() => h.close());

describe("a deleted database", () => {
  let first: { id: string; token: string };

  it("stops answering at once, frees its name, and is listed as deleted", async () => {
    first = await makeDatabase("orders", 5);
    expect((await owner.api.delete(v1("/databases/orders"))).status).toBe(200);
    expect((await owner.api.get(v1("/databases/orders"))).status).toBe(404);
    await expect(sql("orders", first.token).execute("SELECT 1")).rejects.toThrow();
    expect(existsSync(kept(first.id))).toBe(true);
    const list = (await owner.api.get(v3("/databases?deleted=true"))).body;
    expect(list.databases).toEqual([
      expect.objectContaining({
        Name: "orders",
        DbId: first.id,
        group: "default",
        organization_id: orgId,
        deleted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        group_deleted_at: null,
      }),
    ]);
    // The name is free again: a new database takes it.
    await makeDatabase("orders", 1);
    expect(await count("orders")).toBe(1);
  });

  it("comes back under a new name when the old one is taken, with its rows, and needs new tokens", async () => {
    const taken = await owner.api.post(v3(`/databases/${first.id}/restore`));
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatch(/already exists.*"name"/);
    expect(await deletedNames()).toContain("orders");
    const r = await owner.api.post(v3(`/databases/${first.id}/restore`), { name: "orders-back" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.database).toMatchObject({ Name: "orders-back", DbId: first.id, deleted_at: null });
    expect(await count("orders-back")).toBe(5);
    // A token of the database as it was stays refused.
    await expect(sql("orders-back", first.token).execute("SELECT 1")).rejects.toThrow(/revoked|rotat/i);
    expect(await deletedNames()).not.toContain("orders");
    expect(existsSync(kept(first.id))).toBe(false);
    // It can be written to and keeps its history (a branch at a moment before the deletion works).
    const token = (await owner.api.post(v1("/databases/orders-back/auth/tokens"))).body.jwt;
    await sql("orders-back", token).execute("INSERT INTO items VALUES (6)");
    expect(await count("orders-back")).toBe(6);
  });

  it("keeps an encrypted database encrypted: restored, it opens with its key only", async () => {
    const key = newKey();
    const vault = await makeDatabase("vault", 3, "default", key);
    expect((await owner.api.delete(v1("/databases/vault"))).status).toBe(200);
    expect((await owner.api.post(v3(`/databases/${vault.id}/restore`))).status).toBe(200);
    expect(await count("vault", key)).toBe(3);
    await expect(count("vault")).rejects.toThrow(/encrypt/i);
  });

  it("pages through the deleted ones, newest first, each once", async () => {
    for (const name of ["page-a", "page-b", "page-c"]) {
      await makeDatabase(name, 1);
      expect((await owner.api.delete(v1(`/databases/${name}`))).status).toBe(200);
    }
    const seen: string[] = [];
    let cursor = "";
    for (let i = 0; i < 50; i++) {
      const r = await owner.api.get(
        v3(`/databases?deleted=true&limit=1${cursor ? `&cursor=${cursor}` : ""}`),
      );
      expect(r.status, r.text).toBe(200);
      seen.push(...r.body.databases.map((d: { Name: string }) => d.Name));
      if (!r.body.pagination.next) break;
      cursor = r.body.pagination.next;
    }
    expect(seen.slice(0, 3)).toEqual(["page-c", "page-b", "page-a"]);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe((await deletedNames()).length);
  });

  it("counts against the organization's storage while kept", async () => {
    const storage = async () =>
      (
        (await owner.api.get(v1("/invoices?type=upcoming"))).body.invoices[0].lines as Array<{
          item: string;
          used: number;
        }>
      ).find((l) => l.item === "storage_bytes")!.used;
    await makeDatabase("bulky", 50);
    const before = await storage();
    expect((await owner.api.delete(v1("/databases/bulky"))).status).toBe(200);
    expect(await storage()).toBe(before);
  });

  it("gets, restored as a schema database's follower, the schema changes made while it was deleted", async () => {
    expect(
      (await owner.api.post(v1("/databases"), { name: "shape", group: "default", is_schema: true })).status,
    ).toBe(200);
    const shapeToken = (await owner.api.post(v1("/databases/shape/auth/tokens"))).body.jwt as string;
    const child = await owner.api.post(v1("/databases"), {
      name: "follower",
      group: "default",
      schema: "shape",
    });
    expect(child.status, child.text).toBe(200);
    expect((await owner.api.delete(v1("/databases/follower"))).status).toBe(200);
    await sql("shape", shapeToken).execute("CREATE TABLE added_meanwhile (x)");
    expect((await owner.api.post(v3(`/databases/${child.body.database.DbId}/restore`))).status).toBe(200);
    const token = (await owner.api.post(v1("/databases/follower/auth/tokens"))).body.jwt as string;
    const tables = async () =>
      (await sql("follower", token).execute("SELECT name FROM sqlite_schema WHERE type = 'table'")).rows.map(
        (r) => r.name,
      );
    for (let i = 0; i < 100 && !(await tables()).includes("added_meanwhile"); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await tables()).toContain("added_meanwhile");
  });

  it("is refused to members, to other organizations, and for ids that weren't deleted", async () => {
    const gone = await makeDatabase("scratch", 1);
    expect((await owner.api.delete(v1("/databases/scratch"))).status).toBe(200);
    expect((await member.api.post(v3(`/databases/${gone.id}/restore`))).status).toBe(403);
    const stranger = await createUser(h);
    const strangerOrg = await createTeam(stranger);
    const theirs = (await stranger.api.get(`/v1/organizations/${strangerOrg}`)).body.organization.id;
    expect((await stranger.api.post(`/v3/organizations/${theirs}/databases/${gone.id}/restore`)).status).toBe(
      404,
    );
    const unknown = await owner.api.post(v3("/databases/00000000-0000-4000-8000-000000000000/restore"));
    expect(unknown.status).toBe(404);
    expect(await deletedNames()).toContain("scratch");
  });

  it("is kept across a restart, also when the process ended before its files were moved aside", async () => {
    const late = await makeDatabase("late", 2);
    expect((await owner.api.delete(v1("/databases/late"))).status).toBe(200);
    await h.restart(async () => {
      // As if the process had ended right after the deletion committed: the files still in place.
      const instance = path.join(h.dataDir, "locations", "aws-us-east-1", `${late.id}.db`);
      for (const f of readdirSync(path.dirname(kept(late.id))).filter((n) => n.startsWith(late.id)))
        renameSync(path.join(path.dirname(kept(late.id)), f), instance + f.slice(`${late.id}.db`.length));
    });
    expect(existsSync(kept(late.id))).toBe(true);
    expect(await deletedNames()).toContain("late");
    expect((await owner.api.post(v3(`/databases/${late.id}/restore`))).status).toBe(200);
    expect(await count("late")).toBe(2);
  });

  it("is swept once its time is over, files and all, and can't be restored after", async () => {
    const old = await makeDatabase("old", 1);
    expect((await owner.api.delete(v1("/databases/old"))).status).toBe(200);
    const real = h.shoal.deps.clock;
    try {
      h.shoal.deps.clock = () => new Date(real().getTime() + 121 * 3_600_000);
      expect((await owner.api.post(v3(`/databases/${old.id}/restore`))).status).toBe(404);
      expect(await sweepDeleted(h.shoal.deps)).toBeGreaterThanOrEqual(1);
    } finally {
      h.shoal.deps.clock = real;
    }
    expect(existsSync(kept(old.id))).toBe(false);
    expect(await deletedNames()).not.toContain("old");
    expect((await owner.api.post(v3(`/databases/${old.id}/restore`))).status).toBe(404);
  });
});

describe("a deleted group", () => {
  it("takes its databases along, and brings them back when it is restored", async () => {
    const g = await createGroup(owner, team, "spread", "aws-us-east-1");
    const one = await makeDatabase("in-group", 4, "spread");
    const groupToken = (await owner.api.post(v1("/groups/spread/auth/tokens"))).body.jwt as string;
    expect((await owner.api.delete(v1("/groups/spread"))).status).toBe(200);
    const groups = (await owner.api.get(v3("/deleted-groups"))).body.groups;
    expect(groups).toContainEqual(
      expect.objectContaining({ uuid: g.uuid, name: "spread", cascade_databases: 1 }),
    );
    const alone = await owner.api.post(v3(`/databases/${one.id}/restore`));
    expect(alone.status).toBe(409);
    expect(alone.body.error).toMatch(/restore the group/);
    const r = await owner.api.post(v3(`/groups/${g.uuid}/restore`));
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ group: { name: "spread", uuid: g.uuid }, failures: {} });
    expect(r.body.databases.map((d: { Name: string }) => d.Name)).toEqual(["in-group"]);
    expect(await count("in-group")).toBe(4);
    // Tokens of the group as it was stay refused too.
    await expect(sql("in-group", groupToken).execute("SELECT 1")).rejects.toThrow(/revoked|rotat/i);
    expect((await owner.api.get(v3("/deleted-groups"))).body.groups).toEqual([]);
  });

  it("isn't restored into a group that moved to another organization meanwhile", async () => {
    await createGroup(owner, team, "moving", "aws-us-east-1");
    const gone = await makeDatabase("left-behind", 1, "moving");
    expect((await owner.api.delete(v1("/databases/left-behind"))).status).toBe(200);
    const other = await createTeam(owner);
    const moved = await owner.api.post(v1("/groups/moving/transfer"), { organization: other });
    expect(moved.status, moved.text).toBe(200);
    const r = await owner.api.post(v3(`/databases/${gone.id}/restore`));
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/no longer exists/);
    expect(await deletedNames()).toContain("left-behind");
  });
});

describe("an organization that turns recovery off", () => {
  it("deletes for good; only owners and admins may choose", async () => {
    expect((await member.api.patch(v1(), { restore_enabled: false })).status).toBe(403);
    // A member may still change overages (core operation 3 is unchanged).
    expect((await member.api.patch(v1(), { overages: true })).status).toBe(200);
    const kept1 = await makeDatabase("kept-before", 1);
    expect((await owner.api.delete(v1("/databases/kept-before"))).status).toBe(200);
    expect((await owner.api.patch(v1(), { restore_enabled: false })).status).toBe(200);
    expect((await owner.api.get(v1())).body.organization.restore_enabled).toBe(false);
    const final = await makeDatabase("final", 1);
    expect((await owner.api.delete(v1("/databases/final"))).status).toBe(200);
    expect(existsSync(kept(final.id))).toBe(false);
    expect(await deletedNames()).not.toContain("final");
    const off = await owner.api.post(v3(`/databases/${kept1.id}/restore`));
    expect(off.status).toBe(409);
    expect(off.body.error).toMatch(/turned off/);
    expect((await owner.api.patch(v1(), { restore_enabled: true })).status).toBe(200);
    expect((await owner.api.post(v3(`/databases/${kept1.id}/restore`))).status).toBe(200);
  });
});
