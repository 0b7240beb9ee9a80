import { existsSync } from "node:fs";
import { createClient } from "@libsql/client";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, createGroup, createUser, type TestUser, uniqueName } from "../helpers/factories.js";
import { instanceFile, isValidDatabase } from "../helpers/files.js";
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
