import { existsSync } from "node:fs";
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
let member: TestUser;
let org: string;
const dbp = (d: string) => `/v1/organizations/${org}/databases/${d}`;
const grp = (g: string) => `/v1/organizations/${org}/groups/${g}`;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  member = await createUser(h);
  org = await createTeam(u);
  await addMember(u, org, member.username, "member");
});
afterAll(() => h.close());

async function auditOf(code: string) {
  const r = await u.api.get(`/v1/organizations/${org}/audit-logs`);
  return (r.body.audit_logs as Array<{ code: string; data: any }>).filter((e) => e.code === code);
}

describe("legacy instance routes", () => {
  it("creates an instance with the CLI's {Location} body by adding the location to the group", async () => {
    await createGroup(u, org, "legacy");
    const a = await createDatabase(u, org, "legacy-a", "legacy");
    const b = await createDatabase(u, org, "legacy-b", "legacy");
    const r = await u.api.post(`${dbp("legacy-a")}/instances`, { Location: "aws-eu-west-1" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.instance).toEqual({
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "aws-eu-west-1",
      type: "replica",
      region: "aws-eu-west-1",
      hostname: `legacy-a-${org}.aws-eu-west-1.shoal.test`,
    });
    expect((await u.api.get(grp("legacy"))).body.group.locations).toEqual(["aws-us-east-1", "aws-eu-west-1"]);
    for (const d of [a, b])
      expect(isValidDatabase(instanceFile(h.dataDir, "aws-eu-west-1", d.DbId))).toBe(true);
    expect((await auditOf("instance-create"))[0]?.data).toEqual({
      group: "legacy",
      location: "aws-eu-west-1",
      database: "legacy-a",
    });

    const again = await u.api.post(`${dbp("legacy-a")}/instances`, { location: "aws-eu-west-1" });
    expect(again.body.instance).toEqual(r.body.instance);
    expect(await auditOf("instance-create")).toHaveLength(1);
  });

  it("waits for an instance: at once for the primary, once caught up for a replica", async () => {
    const primary = await u.api.get(`${dbp("legacy-a")}/instances/aws-us-east-1/wait`);
    expect(primary).toMatchObject({ status: 200, body: {} });
    const replica = await u.api.get(`${dbp("legacy-a")}/instances/aws-eu-west-1/wait`);
    expect(replica).toMatchObject({ status: 200, body: {} });
    const missing = await u.api.get(`${dbp("legacy-a")}/instances/aws-us-west-2/wait`);
    expect(missing).toMatchObject({
      status: 404,
      body: { error: "could not find instance aws-us-west-2 of database legacy-a" },
    });
  });

  it("refuses to delete an instance whose location other databases of the group use", async () => {
    const r = await u.api.delete(`${dbp("legacy-a")}/instances/aws-eu-west-1`);
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("locations belong to the group");
    expect((await u.api.get(grp("legacy"))).body.group.locations).toContain("aws-eu-west-1");
  });

  it("deletes the instance of a database alone in its group, removing the location and its file", async () => {
    await createGroup(u, org, "lonely");
    const d = await createDatabase(u, org, "alone", "lonely");
    await u.api.post(`${dbp("alone")}/instances`, { Location: "aws-ap-northeast-1" });
    const file = instanceFile(h.dataDir, "aws-ap-northeast-1", d.DbId);
    expect(existsSync(file)).toBe(true);

    const r = await u.api.delete(`${dbp("alone")}/instances/aws-ap-northeast-1`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.instance).toMatchObject({ name: "aws-ap-northeast-1", type: "replica" });
    expect(existsSync(file)).toBe(false);
    expect((await u.api.get(grp("lonely"))).body.group.locations).toEqual(["aws-us-east-1"]);
    expect((await auditOf("instance-delete"))[0]?.data).toEqual({
      group: "lonely",
      location: "aws-ap-northeast-1",
      database: "alone",
    });
  });

  it("never deletes the primary, and answers 404 for an instance the database doesn't have", async () => {
    const primary = await u.api.delete(`${dbp("alone")}/instances/aws-us-east-1`);
    expect(primary.status).toBe(400);
    expect(primary.body.error).toContain("primary");
    expect((await u.api.delete(`${dbp("alone")}/instances/aws-eu-west-1`)).status).toBe(404);
    expect((await u.api.delete(`${dbp("nobody")}/instances/aws-eu-west-1`)).status).toBe(404);
  });

  it("refuses a missing or unknown location (400) and an unknown database (404)", async () => {
    expect(await u.api.post(`${dbp("alone")}/instances`, {})).toMatchObject({
      status: 400,
      body: { error: "location is required" },
    });
    expect(await u.api.post(`${dbp("alone")}/instances`, { Location: "mars" })).toMatchObject({
      status: 400,
      body: { error: "invalid location: mars" },
    });
    expect((await u.api.post(`${dbp("nobody")}/instances`, { Location: "aws-eu-west-1" })).status).toBe(404);
  });

  it("needs group:configure as well as db:configure, since the group changes", async () => {
    await createGroup(u, org, "half-scoped");
    await createDatabase(u, org, uniqueName("hs"), "half-scoped");
    const name = (await u.api.get(`/v1/organizations/${org}/databases?group=half-scoped`)).body.databases[0]
      .Name;
    const minted = await u.api.post(`/v1/auth/api-tokens/${uniqueName("t")}`, {
      organization: org,
      group: "half-scoped",
      scopes: ["read", "db:configure"],
    });
    const t = client(h.url, minted.body.token);
    const r = await t.post(`${dbp(name)}/instances`, { Location: "aws-eu-west-1" });
    expect(r.status).toBe(403);
    expect(r.body.error).toContain("group:configure");
    expect((await u.api.get(grp("half-scoped"))).body.group.locations).toEqual(["aws-us-east-1"]);
    // A member may do both.
    expect((await member.api.post(`${dbp(name)}/instances`, { Location: "aws-eu-west-1" })).status).toBe(200);
  });
});
