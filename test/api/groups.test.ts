import { existsSync } from "node:fs";
import { createClient } from "@libsql/client";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addMember,
  createDatabase,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
  uniqueName,
} from "../helpers/factories.js";
import { instanceFile, isValidDatabase } from "../helpers/files.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;
const g = (name: string) => `/v1/organizations/${u.username}/groups/${name}`;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
});
afterAll(() => h.close());

describe("groups", () => {
  it("answers a group in Turso's shape", async () => {
    const group = await createGroup(u, u.username, "shape", "aws-us-west-2");
    expect(group).toEqual({
      name: "shape",
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      version: "0.0.0-test",
      primary: "aws-us-west-2",
      locations: ["aws-us-west-2"],
      archived: false,
      delete_protection: false,
      status: { locations: [{ name: "aws-us-west-2", status: "up" }] },
    });
    expect((await u.api.get(g("shape"))).body.group).toEqual(group);
  });

  it("uses the catalogue's first location when none is given", async () => {
    const r = await u.api.post(`/v1/organizations/${u.username}/groups`, { name: "anywhere" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.group.primary).toBe("aws-us-east-1");
  });

  it("lists groups sorted by name", async () => {
    const r = await u.api.get(`/v1/organizations/${u.username}/groups`);
    const names = r.body.groups.map((x: { name: string }) => x.name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain("shape");
  });

  it("deletes a group with its databases and their files", async () => {
    await createGroup(u, u.username, "doomed", "aws-us-east-1");
    await u.api.post(`${g("doomed")}/locations/aws-eu-west-1`);
    const a = await createDatabase(u, u.username, uniqueName("a"), "doomed");
    const b = await createDatabase(u, u.username, uniqueName("b"), "doomed");
    const files = [a, b].flatMap((d) =>
      ["aws-us-east-1", "aws-eu-west-1"].map((l) => instanceFile(h.dataDir, l, d.DbId)),
    );
    expect(files.every(existsSync)).toBe(true);
    const r = await u.api.delete(g("doomed"));
    expect(r.status).toBe(200);
    expect(r.body.group.name).toBe("doomed");
    expect(files.some(existsSync)).toBe(false);
    const left = await u.api.get(`/v1/organizations/${u.username}/databases`);
    expect(left.body.databases.map((d: { Name: string }) => d.Name)).not.toContain(a.Name);
  });

  it("refuses invalid group names", async () => {
    for (const name of ["", "Upper", "has space", "x".repeat(65)]) {
      const r = await u.api.post(`/v1/organizations/${u.username}/groups`, {
        name,
        location: "aws-us-east-1",
      });
      expect(r.status, name).toBe(400);
    }
  });
});

describe("core operation 2: adding a location to a group", () => {
  it("gives every existing database an instance in the new location, with the primary's data", async () => {
    await createGroup(u, u.username, "grow", "aws-us-east-1");
    const dbs = [];
    for (let i = 0; i < 3; i++) dbs.push(await createDatabase(u, u.username, uniqueName("grow"), "grow"));
    // Write into one primary, to see that the new replica carries its data.
    const token = (await u.api.post(`/v1/organizations/${u.username}/databases/${dbs[0]!.Name}/auth/tokens`))
      .body.jwt;
    const c = createClient({ url: `${h.url}/db/${u.username}/${dbs[0]!.Name}/`, authToken: token });
    await c.executeMultiple("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('hello');");
    c.close();

    const r = await u.api.post(`${g("grow")}/locations/aws-ap-northeast-1`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.group.locations).toEqual(["aws-us-east-1", "aws-ap-northeast-1"]);
    for (const d of dbs)
      expect(isValidDatabase(instanceFile(h.dataDir, "aws-ap-northeast-1", d.DbId))).toBe(true);
    const replica = new Database(instanceFile(h.dataDir, "aws-ap-northeast-1", dbs[0]!.DbId), {
      readonly: true,
    });
    expect(replica.prepare("SELECT v FROM t").raw(true).all()).toEqual([["hello"]]);
    replica.close();
  });

  it("gives databases created later an instance in every location of their group", async () => {
    const d = await createDatabase(u, u.username, uniqueName("later"), "grow");
    for (const l of ["aws-us-east-1", "aws-ap-northeast-1"]) {
      expect(isValidDatabase(instanceFile(h.dataDir, l, d.DbId))).toBe(true);
    }
    expect(existsSync(instanceFile(h.dataDir, "aws-eu-west-1", d.DbId))).toBe(false);
  });

  it("is safe to retry: adding a location the group has changes nothing", async () => {
    const before = (await u.api.get(g("grow"))).body.group;
    const r = await u.api.post(`${g("grow")}/locations/aws-ap-northeast-1`);
    expect(r.status).toBe(200);
    expect(r.body.group).toEqual(before);
    const primaryAgain = await u.api.post(`${g("grow")}/locations/aws-us-east-1`);
    expect(primaryAgain.body.group.locations).toEqual(before.locations);
  });

  it("removes a location with its instances, and removing it again is a no-op", async () => {
    const d = await createDatabase(u, u.username, uniqueName("rm"), "grow");
    const file = instanceFile(h.dataDir, "aws-ap-northeast-1", d.DbId);
    expect(existsSync(file)).toBe(true);
    const r = await u.api.delete(`${g("grow")}/locations/aws-ap-northeast-1`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.group.locations).toEqual(["aws-us-east-1"]);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(instanceFile(h.dataDir, "aws-us-east-1", d.DbId))).toBe(true);
    const again = await u.api.delete(`${g("grow")}/locations/aws-ap-northeast-1`);
    expect(again.status).toBe(200);
    const dbView = await u.api.get(`/v1/organizations/${u.username}/databases/${d.Name}`);
    expect(dbView.body.database.regions).toEqual(["aws-us-east-1"]);
  });

  it("refuses to remove a location code the catalogue doesn't know", async () => {
    const r = await u.api.delete(`${g("grow")}/locations/nowhere`);
    expect(r).toMatchObject({ status: 400, body: { error: "invalid location: nowhere" } });
  });
});

async function auditEntries(org: string): Promise<Array<{ code: string; message: string; data: any }>> {
  const r = await u.api.get(`/v1/organizations/${org}/audit-logs`);
  expect(r.status, r.text).toBe(200);
  return r.body.audit_logs;
}

describe("group configuration", () => {
  it("answers {delete_protection} unwrapped, and PATCH turns it on and off with an audit entry each", async () => {
    await createGroup(u, u.username, "guarded");
    expect((await u.api.get(`${g("guarded")}/configuration`)).body).toEqual({ delete_protection: false });
    const on = await u.api.patch(`${g("guarded")}/configuration`, { delete_protection: true });
    expect(on).toMatchObject({ status: 200, body: { delete_protection: true } });
    expect((await u.api.get(g("guarded"))).body.group.delete_protection).toBe(true);
    const refused = await u.api.delete(g("guarded"));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain("protected");
    const off = await u.api.patch(`${g("guarded")}/configuration`, { delete_protection: false });
    expect(off.body).toEqual({ delete_protection: false });
    const codes = (await auditEntries(u.username)).map((e) => e.code);
    expect(codes.indexOf("group-unprotect")).toBeLessThan(codes.indexOf("group-protect"));
    expect(codes).toContain("group-protect");
  });

  it("leaves the flag as it is for an absent or null field, and writes no audit entry", async () => {
    await createGroup(u, u.username, "steady");
    await u.api.patch(`${g("steady")}/configuration`, { delete_protection: true });
    const before = (await auditEntries(u.username)).length;
    for (const body of [{}, { delete_protection: null }, { delete_protection: true }]) {
      const r = await u.api.patch(`${g("steady")}/configuration`, body);
      expect(r.body).toEqual({ delete_protection: true });
    }
    expect((await auditEntries(u.username)).length).toBe(before);
  });

  it("refuses a non-boolean flag and an unknown group", async () => {
    await createGroup(u, u.username, "typed");
    const bad = await u.api.patch(`${g("typed")}/configuration`, { delete_protection: "yes" });
    expect(bad.status).toBe(400);
    expect((await u.api.get(`${g("typed")}/configuration`)).body.delete_protection).toBe(false);
    expect(await u.api.get(`${g("nowhere")}/configuration`)).toMatchObject({
      status: 404,
      body: { error: "group not found" },
    });
  });
});

describe("renaming a group", () => {
  it("renames with the CLI's {Name} body and keeps hostnames, group tokens and scoped API tokens working", async () => {
    await createGroup(u, u.username, "before");
    const d = await createDatabase(u, u.username, uniqueName("kept"), "before");
    const groupToken = (await u.api.post(`${g("before")}/auth/tokens`)).body.jwt as string;
    const scoped = await u.api.post(`/v1/auth/api-tokens/${uniqueName("scoped")}`, {
      organization: u.username,
      group: "before",
      scopes: ["read-only"],
    });
    expect(scoped.status, scoped.text).toBe(200);

    const r = await u.api.post(`${g("before")}/rename`, { Name: "after" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.group).toMatchObject({ name: "after", primary: "aws-us-east-1" });
    expect((await u.api.get(g("before"))).status).toBe(404);
    const db = (await u.api.get(`/v1/organizations/${u.username}/databases/${d.Name}`)).body.database;
    expect(db).toMatchObject({ group: "after", Hostname: d.Hostname });

    const c = createClient({ url: `${h.url}/db/${u.username}/${d.Name}/`, authToken: groupToken });
    expect((await c.execute("SELECT 1 AS one")).rows[0]?.one).toBe(1);
    c.close();
    const asScoped = client(h.url, scoped.body.token);
    const listed = await asScoped.get(`/v1/organizations/${u.username}/groups`);
    expect(listed.body.groups.map((x: { name: string }) => x.name)).toEqual(["after"]);

    const entry = (await auditEntries(u.username)).find((e) => e.code === "group-rename");
    expect(entry?.data).toEqual({ group: "after", from: "before" });
  });

  it("refuses a taken name (409) and an invalid one (400), changing nothing", async () => {
    await createGroup(u, u.username, "taken-a");
    await createGroup(u, u.username, "taken-b");
    expect(await u.api.post(`${g("taken-a")}/rename`, { name: "taken-b" })).toMatchObject({
      status: 409,
      body: { error: "group already exists" },
    });
    for (const body of [{ name: "Bad Name" }, { name: "" }, {}]) {
      expect((await u.api.post(`${g("taken-a")}/rename`, body)).status).toBe(400);
    }
    expect((await u.api.get(g("taken-a"))).status).toBe(200);
    expect((await u.api.post(`${g("nowhere")}/rename`, { name: "x" })).status).toBe(404);
  });

  it("lets a group-scoped token with group:configure rename its own group only", async () => {
    await createGroup(u, u.username, "mine-a");
    await createGroup(u, u.username, "mine-b");
    const minted = await u.api.post(`/v1/auth/api-tokens/${uniqueName("scoped")}`, {
      organization: u.username,
      group: "mine-a",
      scopes: ["group:configure"],
    });
    const t = client(h.url, minted.body.token);
    expect((await t.post(`${g("mine-b")}/rename`, { name: "stolen" })).status).toBe(403);
    expect((await t.post(`${g("mine-a")}/rename`, { name: "mine-c" })).status).toBe(200);
    expect((await u.api.get(g("mine-c"))).status).toBe(200);
  });
});

describe("unarchiving and updating a group", () => {
  it("reports an archived group and its databases as archived until unarchived", async () => {
    const group = await createGroup(u, u.username, "sleepy");
    const d = await createDatabase(u, u.username, uniqueName("sleepy"), "sleepy");
    // Shoal never archives a group itself; set the flag as an operator would, in the store.
    await h.shoal.deps.store.write((r) => r.groups.update(group.uuid, { archived: 1 }));
    expect((await u.api.get(g("sleepy"))).body.group.archived).toBe(true);
    const db = (await u.api.get(`/v1/organizations/${u.username}/databases/${d.Name}`)).body.database;
    expect(db).toMatchObject({ archived: true, sleeping: true });

    const r = await u.api.post(`${g("sleepy")}/unarchive`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.group).toMatchObject({ name: "sleepy", archived: false });
    const after = (await u.api.get(`/v1/organizations/${u.username}/databases/${d.Name}`)).body.database;
    expect(after).toMatchObject({ archived: false, sleeping: false });
    const entry = (await auditEntries(u.username)).find((e) => e.code === "group-unarchive");
    expect(entry?.data).toEqual({ group: "sleepy", archived: true });
  });

  it("unarchives a group that isn't archived as a recorded no-op", async () => {
    await createGroup(u, u.username, "awake");
    const r = await u.api.post(`${g("awake")}/unarchive`, "", { contentType: "application/json" });
    expect(r.body.group.archived).toBe(false);
    expect((await u.api.post(`${g("nowhere")}/unarchive`)).status).toBe(404);
  });

  it("answers {} to an update, accepting the old CLI's body, and records it", async () => {
    await createGroup(u, u.username, "current");
    const r = await u.api.post(`${g("current")}/update`, { Version: "latest", Extensions: "all" });
    expect(r).toMatchObject({ status: 200, body: {} });
    expect(r.headers.get("content-type")).toContain("application/json");
    const entry = (await auditEntries(u.username)).find((e) => e.code === "group-update");
    expect(entry?.data).toEqual({ group: "current", version: "0.0.0-test" });
    expect((await u.api.post(`${g("nowhere")}/update`)).status).toBe(404);
  });

  it("refuses members without group:configure: a viewer can't unarchive, rename or update", async () => {
    const owner = await createUser(h);
    const viewer = await createUser(h);
    const team = await createTeam(owner);
    await addMember(owner, team, viewer.username, "viewer");
    await createGroup(owner, team, "default");
    const p = `/v1/organizations/${team}/groups/default`;
    for (const [path, body] of [
      [`${p}/unarchive`, {}],
      [`${p}/update`, {}],
      [`${p}/rename`, { name: "viewer-was-here" }],
    ] as const) {
      expect((await viewer.api.post(path, body)).status).toBe(403);
    }
    expect((await viewer.api.patch(`${p}/configuration`, { delete_protection: true })).status).toBe(403);
    expect((await owner.api.get(`${p}/configuration`)).body.delete_protection).toBe(false);
    expect((await owner.api.get(p)).status).toBe(200);
  });
});

describe("paging through groups", () => {
  it("pages with limit and cursor until pagination.next is null, and answers everything without limit", async () => {
    const owner = await createUser(h);
    const names = ["p-a", "p-b", "p-c", "p-d", "p-e"];
    for (const n of names) await createGroup(owner, owner.username, n);
    const base = `/v1/organizations/${owner.username}/groups`;
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 5; i++) {
      const r = await owner.api.get(`${base}?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.groups.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.groups.map((x: { name: string }) => x.name));
      cursor = r.body.pagination.next;
      if (cursor === null) break;
    }
    expect(seen).toEqual(names);
    const all = await owner.api.get(base);
    expect(all.body.groups.map((x: { name: string }) => x.name)).toEqual(names);
    expect(all.body.pagination).toEqual({ next: null });
  });

  it("refuses a cursor it didn't make and a limit out of range", async () => {
    const base = `/v1/organizations/${u.username}/groups`;
    expect((await u.api.get(`${base}?cursor=garbage`)).status).toBe(400);
    expect((await u.api.get(`${base}?limit=0`)).status).toBe(400);
  });
});
