import { createClient as createSqlClient } from "@libsql/client";
import { createClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, createGroup, createTeam, createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

/**
 * The v3 API (organizations, groups and databases by id) over real sockets, raw and through
 * @tursodatabase/api pointed at `/v3/`, checked against what v1 says of the same things.
 */
let h: TestShoal;
let owner: TestUser;
let stranger: TestUser;
let team: string;
let orgId: string;
let groups: { default: string; solo: string };
const v3 = (path = "") => `/v3/organizations/${orgId}${path}`;

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  stranger = await createUser(h);
  team = await createTeam(owner);
  groups = {
    default: (await createGroup(owner, team, "default", "aws-us-east-1")).uuid,
    solo: (await createGroup(owner, team, "solo", "aws-us-west-2")).uuid,
  };
  orgId = (await owner.api.get(`/v1/organizations/${team}`)).body.organization.id;
});
afterAll(() => h.close());

async function sql(url: string, token: string, statement: string) {
  const c = createSqlClient({ url, authToken: token });
  try {
    return await c.execute(statement);
  } finally {
    c.close();
  }
}

describe("the organization's id", () => {
  it("is in v1's Retrieve Organization and in v2's list, alike", async () => {
    expect(orgId).toMatch(/^[0-9a-f-]{36}$/);
    const v2 = await owner.api.get("/v2/organizations");
    expect(v2.body.organizations.find((o: { slug: string }) => o.slug === team).id).toBe(orgId);
  });
});

describe("databases by id", () => {
  it("creates in a group named by id and answers v1's fields plus v3's, the same as v1 reads them", async () => {
    const r = await owner.api.post(v3("/databases"), { name: "v3-made", group_id: groups.solo });
    expect(r.status, r.text).toBe(200);
    const made = r.body.database;
    expect(made).toMatchObject({
      Name: "v3-made",
      DbId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      group: "solo",
      group_id: groups.solo,
      organization_id: orgId,
      regions: ["aws-us-west-2"],
      primaryRegion: "aws-us-west-2",
      delete_protection: false,
      allow_rules_config: { allowed_ips: [], allowed_aws_vpc_ids: [] },
    });
    // Settings changed through v1 show in v3's object.
    const cfg = `/v1/organizations/${team}/databases/v3-made/configuration`;
    expect(
      (await owner.api.patch(cfg, { delete_protection: true, allowed_ips: ["10.0.0.0/8"] })).status,
    ).toBe(200);
    const got = await owner.api.get(v3(`/databases/${made.DbId}`));
    expect(got.status, got.text).toBe(200);
    const v1 = (await owner.api.get(`/v1/organizations/${team}/databases/v3-made`)).body.database;
    expect(got.body.database).toEqual({
      ...v1,
      delete_protection: true,
      group_id: groups.solo,
      organization_id: orgId,
      allow_rules_config: { allowed_ips: ["10.0.0.0/8"], allowed_aws_vpc_ids: [] },
    });
    // Protected: v3's delete refuses as v1's does, and the database stays.
    const del = await owner.api.delete(v3(`/databases/${made.DbId}`));
    expect(del.status).toBe(400);
    expect(del.body.error).toMatch(/protect/);
    expect((await owner.api.get(v3(`/databases/${made.DbId}`))).status).toBe(200);
  });

  it("puts a branch that names no group in its source's group, as the turso CLI's fork expects", async () => {
    await createDatabase(owner, team, "fork-source", "solo");
    const r = await owner.api.post(v3("/databases"), {
      name: "fork-made",
      seed: { type: "database", value: "fork-source" },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.database).toMatchObject({ group: "solo", parent: { name: "fork-source" } });
    const branches = await owner.api.get(v3(`/databases?parent_db_id=${r.body.database.parent.id}`));
    expect(branches.body.databases.map((d: { Name: string }) => d.Name)).toEqual(["fork-made"]);
  });

  it("mints tokens that open the database (and read-only ones that don't write), then deletes it", async () => {
    const d = (await owner.api.post(v3("/databases"), { name: "v3-tokens", group_id: groups.default })).body
      .database;
    const rw = await owner.api.post(v3(`/databases/${d.DbId}/auth/tokens`), {});
    expect(rw.status, rw.text).toBe(200);
    await sql(d.http_url, rw.body.jwt, "CREATE TABLE t (x)");
    const ro = await owner.api.post(
      v3(`/databases/${d.DbId}/auth/tokens?authorization=read-only&expiration=1h`),
      {},
    );
    expect((await sql(d.http_url, ro.body.jwt, "SELECT count(*) AS n FROM t")).rows[0]?.n).toBe(0);
    await expect(sql(d.http_url, ro.body.jwt, "INSERT INTO t VALUES (1)")).rejects.toThrow(/read-only/);
    const group = await owner.api.post(v3(`/groups/${groups.default}/auth/tokens`), {});
    expect(group.status, group.text).toBe(200);
    await sql(d.http_url, group.body.jwt, "INSERT INTO t VALUES (1)");

    const del = await owner.api.delete(v3(`/databases/${d.DbId}`));
    expect(del.status, del.text).toBe(200);
    expect(del.body).toEqual({ database: "v3-tokens" });
    expect((await owner.api.get(v3(`/databases/${d.DbId}`))).status).toBe(404);
    expect((await owner.api.get(`/v1/organizations/${team}/databases/v3-tokens`)).status).toBe(404);
    await expect(sql(d.http_url, rw.body.jwt, "SELECT 1")).rejects.toThrow();
  });

  it("refuses bad input with a clear 4xx, changing nothing", async () => {
    const before = (await owner.api.get(v3("/databases?limit=1000"))).body.databases.length;
    for (const limit of ["0", "1001", "x"]) {
      const r = await owner.api.get(v3(`/databases?limit=${limit}`));
      expect(r.status, limit).toBe(400);
      expect(r.body.error).toMatch(/limit/);
    }
    const badCursor = await owner.api.get(v3("/databases?deleted=true&cursor=junk"));
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error).toMatch(/cursor/);
    const noGroup = await owner.api.post(v3("/databases"), { name: "lost", group_id: crypto.randomUUID() });
    expect(noGroup.status).toBe(400);
    expect(noGroup.body.error).toMatch(/group/);
    const badName = await owner.api.post(v3("/databases"), { name: "Bad Name", group_id: groups.default });
    expect(badName.status).toBe(400);
    const taken = await owner.api.post(v3("/databases"), { name: "fork-source", group_id: groups.solo });
    expect(taken.status).toBe(409);
    const perms = await owner.api.post(v3(`/groups/${groups.default}/auth/tokens`), {
      fine_grained_permissions: [{ t: ["x"], a: ["drop_tables"] }],
    });
    expect(perms.status).toBe(400);
    expect(perms.body.error).toMatch(/unknown action "drop_tables"/);
    expect((await owner.api.get(v3("/databases?limit=1000"))).body.databases.length).toBe(before);
  });
});

describe("who may reach what", () => {
  it("answers 403 for an organization the caller isn't in (or that doesn't exist), 404 for ids not in it", async () => {
    const mine = await createDatabase(owner, team, "mine-only", "default");
    for (const path of ["/databases", `/databases/${mine.DbId}`, "/groups", `/groups/${groups.default}`]) {
      const r = await stranger.api.get(v3(path));
      expect(r.status, path).toBe(403);
      expect(r.body.error).toMatch(/not a member/);
    }
    const nowhere = await owner.api.get(`/v3/organizations/${crypto.randomUUID()}/databases`);
    expect(nowhere.status).toBe(403);
    // A database and a group of another organization (the stranger's own) aren't found through this one.
    const otherOrg = await createTeam(stranger);
    await createGroup(stranger, otherOrg, "default", "aws-us-east-1");
    const theirs = await createDatabase(stranger, otherOrg, "theirs", "default");
    const theirGroup = (await stranger.api.get(`/v1/organizations/${otherOrg}/groups/default`)).body.group
      .uuid;
    for (const [method, path] of [
      ["GET", `/databases/${theirs.DbId}`],
      ["DELETE", `/databases/${theirs.DbId}`],
      ["POST", `/databases/${theirs.DbId}/auth/tokens`],
      ["GET", `/databases/${crypto.randomUUID()}`],
      ["GET", `/groups/${theirGroup}`],
      ["POST", `/groups/${theirGroup}/auth/tokens`],
    ] as const) {
      const r =
        method === "GET"
          ? await owner.api.get(v3(path))
          : method === "DELETE"
            ? await owner.api.delete(v3(path))
            : await owner.api.post(v3(path), {});
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error, path).toBeTruthy();
    }
    // Their database is untouched, and filtering by their group finds nothing here.
    expect((await stranger.api.get(`/v1/organizations/${otherOrg}/databases/theirs`)).status).toBe(200);
    const filtered = await owner.api.get(v3(`/databases?group_id=${theirGroup}`));
    expect(filtered.body).toEqual({ databases: [], pagination: {} });
  });
});

describe("cursor pagination", () => {
  it("sees every database once while others are created and deleted between pages", async () => {
    const org = await createTeam(owner);
    await createGroup(owner, org, "default", "aws-us-east-1");
    const id = (await owner.api.get(`/v1/organizations/${org}`)).body.organization.id;
    for (const n of ["p-a", "p-b", "p-c", "p-d", "p-e", "p-f", "p-g"])
      await createDatabase(owner, org, n, "default");
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const r = await owner.api.get(
        `/v3/organizations/${id}/databases?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(r.status, r.text).toBe(200);
      seen.push(...r.body.databases.map((d: { Name: string }) => d.Name));
      pages++;
      if (pages === 1) {
        // Between pages: one not yet listed goes, one sorting before the cursor and one after arrive.
        await owner.api.delete(`/v1/organizations/${org}/databases/p-e`);
        await createDatabase(owner, org, "p-0", "default");
        await createDatabase(owner, org, "p-z", "default");
      }
      if (!("next" in r.body.pagination)) break;
      cursor = r.body.pagination.next;
      expect(cursor).toBeTruthy();
    }
    expect(seen).toEqual(["p-a", "p-b", "p-c", "p-d", "p-f", "p-g", "p-z"]);
    expect(pages).toBe(3);
  });
});

describe("@tursodatabase/api pointed at /v3/ with orgId", () => {
  it("lists, creates, gets, mints tokens for and deletes databases, and lists and gets groups", async () => {
    const turso = createClient({ orgId, token: owner.token, baseUrl: `${h.url}/v3/` });
    const created = await turso.databases.create("sdk-v3", { groupId: groups.default });
    expect(created).toEqual({ id: expect.any(String), hostname: expect.any(String), name: "sdk-v3" });
    expect((await turso.databases.list()).map((d) => d.name)).toContain("sdk-v3");
    expect(await turso.databases.get(created.id)).toMatchObject({
      name: "sdk-v3",
      id: created.id,
      group: "default",
    });
    const { jwt } = await turso.databases.createToken(created.id, { authorization: "read-only" });
    const url = (await owner.api.get(v3(`/databases/${created.id}`))).body.database.http_url;
    expect((await sql(url, jwt, "SELECT 1 AS one")).rows[0]?.one).toBe(1);

    const gs = await turso.groups.list();
    expect(gs.map((g) => g.name).sort()).toEqual(["default", "solo"]);
    expect(await turso.groups.get(groups.solo)).toMatchObject({ name: "solo", uuid: groups.solo });
    expect((await turso.groups.createToken(groups.solo)).jwt).toEqual(expect.any(String));

    expect(await turso.databases.delete(created.id)).toEqual({ database: "sdk-v3" });
    await expect(turso.databases.get(created.id)).rejects.toMatchObject({ status: 404 });
  });
});
