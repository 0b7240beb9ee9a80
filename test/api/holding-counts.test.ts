/**
 * The database and group counts kept on each organization's row (read by quota checks) always
 * equal the rows they count, whatever created, deleted or moved them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDatabase,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
  uniqueName,
} from "../helpers/factories.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";
import { storeRows } from "../helpers/store-rows.js";

let h: TestShoal;
let owner: TestUser;

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
});
afterAll(() => h.close());

/** Organizations whose kept counts differ from the rows, with both. */
async function drift(): Promise<unknown[]> {
  return storeRows(
    h,
    `select o.slug, o.database_count, o.group_count,
       (select count(*) from databases d where d.org_id = o.id) as databases,
       (select count(*) from groups g where g.org_id = o.id) as groups
     from organizations o
     where o.database_count <> (select count(*) from databases d where d.org_id = o.id)
        or o.group_count <> (select count(*) from groups g where g.org_id = o.id)`,
  );
}

async function counts(slug: string): Promise<{ databases: number; groups: number }> {
  const [row] = await storeRows(
    h,
    `select database_count, group_count from organizations where slug = '${slug}'`,
  );
  return { databases: Number(row?.database_count), groups: Number(row?.group_count) };
}

describe("the counts an organization's quota checks read", () => {
  it("follow creates, branches and deletes of databases and groups", async () => {
    const team = await createTeam(owner);
    await createGroup(owner, team, "default");
    await createGroup(owner, team, "second", "aws-eu-west-1");
    for (const name of ["a", "b", "c"]) await createDatabase(owner, team, name);
    await createDatabase(owner, team, "d", "second");
    const branch = await owner.api.post(`/v1/organizations/${team}/databases`, {
      name: "a-branch",
      group: "default",
      seed: { type: "database", name: "a" },
    });
    expect(branch.status, branch.text).toBe(200);
    expect(await counts(team)).toEqual({ databases: 5, groups: 2 });
    expect((await owner.api.delete(`/v1/organizations/${team}/databases/b`)).status).toBe(200);
    // Deleting a group takes its databases with it (a cascade in the store).
    expect((await owner.api.delete(`/v1/organizations/${team}/groups/second`)).status).toBe(200);
    expect(await counts(team)).toEqual({ databases: 3, groups: 1 });
    expect(await drift()).toEqual([]);
  });

  it("follow databases and groups transferred between organizations", async () => {
    const from = await createTeam(owner);
    const to = await createTeam(owner);
    await createGroup(owner, from, "default");
    await createGroup(owner, from, "moving");
    await createDatabase(owner, from, "stays");
    await createDatabase(owner, from, "goes");
    await createDatabase(owner, from, "in-moving", "moving");
    const db = await owner.api.post(`/v1/organizations/${from}/databases/goes/transfer`, {
      organization: to,
    });
    expect(db.status, db.text).toBe(200);
    const group = await owner.api.post(`/v1/organizations/${from}/groups/moving/transfer`, {
      organization: to,
    });
    expect(group.status, group.text).toBe(200);
    expect(await counts(from)).toEqual({ databases: 1, groups: 1 });
    // The transferred database landed in a group made for it there, plus the moved group.
    expect(await counts(to)).toEqual({ databases: 2, groups: 2 });
    expect(await drift()).toEqual([]);
  });

  it("stay right when organizations and users are deleted with everything in them", async () => {
    const team = await createTeam(owner);
    await createGroup(owner, team, "default");
    await createDatabase(owner, team, "x");
    expect((await owner.api.delete(`/v1/organizations/${team}`)).status).toBe(200);
    const gone = await createUser(h);
    await createGroup(gone, gone.username, "default");
    await createDatabase(gone, gone.username, "y");
    const admin = client(h.url, h.adminToken);
    expect((await admin.delete(`/v1/admin/users/${gone.username}`)).status).toBe(200);
    expect(await drift()).toEqual([]);
  });

  it("make a capped plan's database quota hold exactly at its cap", async () => {
    const admin = client(h.url, h.adminToken);
    const plan = uniqueName("three");
    await admin.post("/v1/admin/plans", { name: plan, price: "0", quotas: { databases: 3, groups: 1 } });
    const team = await createTeam(owner);
    await admin.post(`/v1/admin/organizations/${team}/plan`, { plan });
    await createGroup(owner, team, "default");
    const second = await owner.api.post(`/v1/organizations/${team}/groups`, { name: "two" });
    expect(second.status).toBe(402);
    for (const name of ["one", "two", "three"]) await createDatabase(owner, team, name);
    const fourth = await owner.api.post(`/v1/organizations/${team}/databases`, {
      name: "four",
      group: "default",
    });
    expect(fourth.status).toBe(402);
    expect(fourth.body.error).toContain("allows 3 databases and it has 3");
    expect((await owner.api.delete(`/v1/organizations/${team}/databases/one`)).status).toBe(200);
    expect(
      (await owner.api.post(`/v1/organizations/${team}/databases`, { name: "four", group: "default" }))
        .status,
    ).toBe(200);
  });
});
