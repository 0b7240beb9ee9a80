import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseUrls, mintToken } from "../helpers/dataplane.js";
import {
  addMember,
  createDatabase,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
  uniqueName,
} from "../helpers/factories.js";
import { instanceFile } from "../helpers/files.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";
import { setDatabaseColumns } from "../helpers/store-columns.js";

let h: TestShoal;
let owner: TestUser;
/** Admin of `source`, only a member of `target`. */
let halfAdmin: TestUser;
/** A member of `source`. */
let member: TestUser;
let source: string;
let target: string;

const grp = (org: string, g: string) => `/v1/organizations/${org}/groups/${g}`;
const dbp = (org: string, d: string) => `/v1/organizations/${org}/databases/${d}`;

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  halfAdmin = await createUser(h);
  member = await createUser(h);
  source = await createTeam(owner);
  target = await createTeam(owner);
  await addMember(owner, source, halfAdmin.username, "admin");
  await addMember(owner, target, halfAdmin.username, "member");
  await addMember(owner, source, member.username, "member");
});
afterAll(() => h.close());

async function auditOf(org: string, code: string) {
  const r = await owner.api.get(`/v1/organizations/${org}/audit-logs`);
  expect(r.status, r.text).toBe(200);
  return (r.body.audit_logs as Array<{ code: string; data: any }>).filter((e) => e.code === code);
}

async function sql(url: string, token: string, statement: string) {
  const c = createClient({ url, authToken: token });
  try {
    return await c.execute(statement);
  } finally {
    c.close();
  }
}

/** Every file under the data folder's locations, to see that a transfer copies nothing. */
function locationFiles(): string[] {
  const root = path.join(h.dataDir, "locations");
  return readdirSync(root, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".db"))
    .sort();
}

describe("transferring a group", () => {
  it("moves the group with its databases and data, changing hostnames but no file", async () => {
    await createGroup(owner, source, "moving");
    expect((await owner.api.post(`${grp(source, "moving")}/locations/aws-eu-west-1`)).status).toBe(200);
    const a = await createDatabase(owner, source, "alpha", "moving");
    const oldToken = await mintToken(owner, source, "alpha");
    await sql(databaseUrls(h, source, "alpha", a.Hostname).httpPath, oldToken, "CREATE TABLE t (v)");
    await sql(
      databaseUrls(h, source, "alpha", a.Hostname).httpPath,
      oldToken,
      "INSERT INTO t VALUES ('kept')",
    );
    const before = (await owner.api.get(grp(source, "moving"))).body.group;
    const files = locationFiles();

    const r = await owner.api.post(`${grp(source, "moving")}/transfer`, { organization: target });
    expect(r.status, r.text).toBe(200);
    // The only unwrapped answer among the group routes, as Turso's specification has it.
    expect(r.body).toEqual({ ...before, status: expect.any(Object) });

    expect((await owner.api.get(grp(source, "moving"))).status).toBe(404);
    expect((await owner.api.get(dbp(source, "alpha"))).status).toBe(404);
    const moved = (await owner.api.get(dbp(target, "alpha"))).body.database;
    expect(moved).toMatchObject({ DbId: a.DbId, group: "moving", Hostname: `alpha-${target}.shoal.test` });
    expect(moved.regions).toEqual(["aws-us-east-1", "aws-eu-west-1"]);
    expect(locationFiles()).toEqual(files);
    expect(existsSync(instanceFile(h.dataDir, "aws-us-east-1", a.DbId))).toBe(true);

    const urls = databaseUrls(h, target, "alpha", moved.Hostname);
    const newToken = await mintToken(owner, target, "alpha");
    for (const url of [urls.httpPath, urls.httpHost]) {
      expect((await sql(url, newToken, "SELECT v FROM t")).rows[0]?.v).toBe("kept");
    }
    // Replication is keyed by database id: the replica keeps following its primary.
    await sql(urls.httpPath, newToken, "INSERT INTO t VALUES ('after')");
    expect((await owner.api.get(`${grp(target, "moving")}/locations/aws-eu-west-1/wait`)).status).toBe(200);
    const replica = `http://alpha-${target}.aws-eu-west-1.shoal.test:${new URL(h.url).port}`;
    expect((await sql(replica, newToken, "SELECT count(*) AS n FROM t")).rows[0]?.n).toBe(2);
    await expect(sql(urls.httpPath, oldToken, "SELECT 1")).rejects.toThrow(/revoked|401/i);
    await expect(
      sql(databaseUrls(h, source, "alpha", a.Hostname).httpPath, newToken, "SELECT 1"),
    ).rejects.toThrow();

    const [out] = await auditOf(source, "group-transfer");
    const [into] = await auditOf(target, "group-transfer");
    for (const e of [out, into]) {
      expect(e?.data).toEqual({ group: "moving", from: source, to: target, databases: ["alpha"] });
    }
  });

  it("revokes API tokens restricted to the group and SQL tokens of the group", async () => {
    await createGroup(owner, source, "scoped");
    await createDatabase(owner, source, uniqueName("s"), "scoped");
    const minted = await owner.api.post(`/v1/auth/api-tokens/${uniqueName("t")}`, {
      organization: source,
      group: "scoped",
      scopes: ["read-only"],
    });
    const scopedApi = client(h.url, minted.body.token);
    expect((await scopedApi.get(grp(source, "scoped"))).status).toBe(200);
    const groupJwt = (await owner.api.post(`${grp(source, "scoped")}/auth/tokens`)).body.jwt as string;

    expect((await owner.api.post(`${grp(source, "scoped")}/transfer`, { organization: target })).status).toBe(
      200,
    );
    expect((await scopedApi.get(grp(target, "scoped"))).status).toBe(401);
    const [d] = (await owner.api.get(`/v1/organizations/${target}/databases?group=scoped`)).body.databases;
    await expect(sql(`${h.url}/db/${target}/${d.Name}/`, groupJwt, "SELECT 1")).rejects.toThrow();
    const fresh = (await owner.api.post(`${grp(target, "scoped")}/auth/tokens`)).body.jwt as string;
    expect((await sql(`${h.url}/db/${target}/${d.Name}/`, fresh, "SELECT 1 AS x")).rows[0]?.x).toBe(1);
  });

  it("refuses when a database name or the group name is taken in the target, changing nothing", async () => {
    await createGroup(owner, source, "clash");
    await createDatabase(owner, source, "dup-name", "clash");
    const transfers = (await auditOf(source, "group-transfer")).length;
    await createGroup(owner, target, "landing");
    await createDatabase(owner, target, "dup-name", "landing");
    const byDb = await owner.api.post(`${grp(source, "clash")}/transfer`, { organization: target });
    expect(byDb.status).toBe(409);
    expect(byDb.body.error).toContain("dup-name");

    await createGroup(owner, target, "clash");
    const byGroup = await owner.api.post(`${grp(source, "clash")}/transfer`, { organization: target });
    expect(byGroup).toMatchObject({
      status: 409,
      body: { error: `group clash already exists in organization ${target}` },
    });
    expect((await owner.api.get(dbp(source, "dup-name"))).body.database.group).toBe("clash");
    expect(await auditOf(source, "group-transfer")).toHaveLength(transfers);
  });

  it("refuses a target the caller doesn't administer, or that doesn't exist, with the same 400", async () => {
    await createGroup(owner, source, "stays");
    const notAdmin = await halfAdmin.api.post(`${grp(source, "stays")}/transfer`, { organization: target });
    const unknown = await owner.api.post(`${grp(source, "stays")}/transfer`, { organization: "no-such-org" });
    expect(notAdmin.status).toBe(400);
    expect(unknown.status).toBe(400);
    expect(notAdmin.body.error).toBe(unknown.body.error.replace("no-such-org", target));
    expect((await owner.api.get(grp(source, "stays"))).status).toBe(200);
  });

  it("refuses a caller who is only a member of the source (403), a missing target and the same organization (400)", async () => {
    await createGroup(owner, source, "guarded-move");
    const asMember = await member.api.post(`${grp(source, "guarded-move")}/transfer`, {
      organization: target,
    });
    expect(asMember).toMatchObject({
      status: 403,
      body: { error: "only organization admins or owners can transfer groups" },
    });
    expect((await owner.api.post(`${grp(source, "guarded-move")}/transfer`, {})).status).toBe(400);
    const same = await owner.api.post(`${grp(source, "guarded-move")}/transfer`, { organization: source });
    expect(same.status).toBe(400);
    expect(
      (await owner.api.post(`${grp(source, "nowhere")}/transfer`, { organization: target })).status,
    ).toBe(404);
  });

  it("refuses a target whose plan has no room for another group (402)", async () => {
    const small = await createTeam(owner);
    await createGroup(owner, small, "only");
    await h.shoal.deps.store.write(async (r) => {
      const org = await r.organizations.findBySlug(small);
      await r.plans.insert({
        name: `one-group-${small}`,
        price: "0",
        groups: 1,
        created_at: new Date().toISOString(),
      });
      await r.plans.assign(org!.id, `one-group-${small}`);
    });
    await createGroup(owner, source, "too-many");
    const r = await owner.api.post(`${grp(source, "too-many")}/transfer`, { organization: small });
    expect(r.status, r.text).toBe(402);
    expect((await owner.api.get(grp(source, "too-many"))).status).toBe(200);
  });

  it("refuses to separate a schema database from the databases that follow it", async () => {
    await createGroup(owner, source, "schemas");
    await createGroup(owner, source, "followers");
    const parent = await createDatabase(owner, source, "the-schema", "schemas");
    const child = await createDatabase(owner, source, "a-follower", "followers");
    await setDatabaseColumns(h, parent.DbId, { is_schema: 1 });
    await setDatabaseColumns(h, child.DbId, { schema_id: parent.DbId });
    const bySchema = await owner.api.post(`${grp(source, "schemas")}/transfer`, { organization: target });
    expect(bySchema.status).toBe(400);
    expect(bySchema.body.error).toContain("a-follower");
    const byFollower = await owner.api.post(`${dbp(source, "a-follower")}/transfer`, { org: target });
    expect(byFollower.status).toBe(400);
    expect(byFollower.body.error).toContain("the-schema");
    await setDatabaseColumns(h, child.DbId, { schema_id: null });
    await setDatabaseColumns(h, parent.DbId, { is_schema: 0 });
  });

  it("refuses a target whose slug would make a hostname longer than a DNS label", async () => {
    const longSlug = await createTeam(owner, `long-${"o".repeat(30)}`);
    await createGroup(owner, source, "wide");
    await createDatabase(owner, source, "n".repeat(30), "wide");
    const r = await owner.api.post(`${grp(source, "wide")}/transfer`, { organization: longSlug });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("hostname label");
  });
});

describe("transferring a database (turso org db-transfer)", () => {
  it("moves it into a new group of the same name and locations, with the CLI's {org} body", async () => {
    await createGroup(owner, source, "solo-move");
    await owner.api.post(`${grp(source, "solo-move")}/locations/aws-ap-northeast-1`);
    const d = await createDatabase(owner, source, "single", "solo-move");
    const sibling = await createDatabase(owner, source, "sibling", "solo-move");
    const siblingToken = await mintToken(owner, source, "sibling");
    const oldToken = await mintToken(owner, source, "single");
    await sql(`${h.url}/db/${source}/single/`, oldToken, "CREATE TABLE t (v)");
    await sql(`${h.url}/db/${source}/single/`, oldToken, "INSERT INTO t VALUES (7)");
    const files = locationFiles();

    const r = await owner.api.post(`${dbp(source, "single")}/transfer`, { org: target });
    expect(r.status, r.text).toBe(200);
    expect(r.body.database).toMatchObject({
      Name: "single",
      DbId: d.DbId,
      group: "solo-move",
      Hostname: `single-${target}.shoal.test`,
      regions: ["aws-us-east-1", "aws-ap-northeast-1"],
    });
    expect(locationFiles()).toEqual(files);
    const made = (await owner.api.get(grp(target, "solo-move"))).body.group;
    expect(made).toMatchObject({
      primary: "aws-us-east-1",
      locations: ["aws-us-east-1", "aws-ap-northeast-1"],
    });
    expect((await owner.api.get(grp(source, "solo-move"))).status).toBe(200);

    const token = await mintToken(owner, target, "single");
    expect((await sql(`${h.url}/db/${target}/single/`, token, "SELECT v FROM t")).rows[0]?.v).toBe(7);
    await expect(sql(`${h.url}/db/${target}/single/`, oldToken, "SELECT 1")).rejects.toThrow();
    // The database left behind keeps its tokens.
    expect((await sql(`${h.url}/db/${source}/sibling/`, siblingToken, "SELECT 1 AS x")).rows[0]?.x).toBe(1);
    expect(sibling.Name).toBe("sibling");

    expect((await auditOf(target, "group-create")).some((e) => e.data.group === "solo-move")).toBe(true);
    expect((await auditOf(source, "db-transfer"))[0]?.data).toEqual({
      database: "single",
      from: source,
      to: target,
      group: "solo-move",
    });
    expect(await auditOf(target, "db-transfer")).toHaveLength(1);
  });

  it("joins the target's group of the same name, building and dropping replicas to match its locations", async () => {
    await createGroup(owner, source, "match");
    await owner.api.post(`${grp(source, "match")}/locations/aws-eu-west-1`);
    await createGroup(owner, target, "match");
    await owner.api.post(`${grp(target, "match")}/locations/aws-us-west-2`);
    const d = await createDatabase(owner, source, "joiner", "match");
    expect(existsSync(instanceFile(h.dataDir, "aws-eu-west-1", d.DbId))).toBe(true);

    const r = await owner.api.post(`${dbp(source, "joiner")}/transfer`, { organization: target });
    expect(r.status, r.text).toBe(200);
    expect(r.body.database.regions).toEqual(["aws-us-east-1", "aws-us-west-2"]);
    expect(existsSync(instanceFile(h.dataDir, "aws-eu-west-1", d.DbId))).toBe(false);
    expect(existsSync(instanceFile(h.dataDir, "aws-us-west-2", d.DbId))).toBe(true);
    const instances = (await owner.api.get(`${dbp(target, "joiner")}/instances`)).body.instances;
    expect(instances.map((i: { name: string }) => i.name)).toEqual(["aws-us-east-1", "aws-us-west-2"]);
  });

  it("refuses a target group of the same name with another primary location (400), changing nothing", async () => {
    await createGroup(owner, source, "apart");
    await createGroup(owner, target, "apart", "aws-eu-west-1");
    await createDatabase(owner, source, "stuck", "apart");
    const r = await owner.api.post(`${dbp(source, "stuck")}/transfer`, { org: target });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("primary location");
    expect((await owner.api.get(dbp(source, "stuck"))).status).toBe(200);
    expect((await owner.api.get(dbp(target, "stuck"))).status).toBe(404);
  });

  it("refuses a taken name (409), a member of the source (403) and a target the caller doesn't administer (400)", async () => {
    await createGroup(owner, source, "refusals");
    await createDatabase(owner, source, "twice", "refusals");
    await createGroup(owner, target, "elsewhere");
    await createDatabase(owner, target, "twice", "elsewhere");
    expect((await owner.api.post(`${dbp(source, "twice")}/transfer`, { org: target })).status).toBe(409);
    await createDatabase(owner, source, "mine", "refusals");
    expect((await member.api.post(`${dbp(source, "mine")}/transfer`, { org: target })).status).toBe(403);
    expect((await halfAdmin.api.post(`${dbp(source, "mine")}/transfer`, { org: target })).status).toBe(400);
    expect((await owner.api.post(`${dbp(source, "mine")}/transfer`, {})).status).toBe(400);
    expect((await owner.api.post(`${dbp(source, "nothing")}/transfer`, { org: target })).status).toBe(404);
    expect((await owner.api.get(dbp(source, "mine"))).status).toBe(200);
  });

  it("refuses a group-scoped token even with every scope, since it can't reach the target", async () => {
    await createGroup(owner, source, "token-bound");
    await createDatabase(owner, source, "bound", "token-bound");
    const minted = await owner.api.post(`/v1/auth/api-tokens/${uniqueName("t")}`, {
      organization: source,
      group: "token-bound",
      scopes: ["full-access"],
    });
    const t = client(h.url, minted.body.token);
    expect((await t.post(`${dbp(source, "bound")}/transfer`, { org: target })).status).toBe(400);
    expect((await t.post(`${grp(source, "token-bound")}/transfer`, { organization: target })).status).toBe(
      403,
    );
    expect((await owner.api.get(dbp(source, "bound"))).status).toBe(200);
  });
});
