import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGroup, createTeam, createUser, type TestUser, uniqueName } from "../helpers/factories.js";
import { type Client, client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let admin: Client;
let owner: TestUser;

beforeAll(async () => {
  h = await startTestShoal();
  admin = client(h.url, h.adminToken);
  owner = await createUser(h);
});
afterAll(() => h.close());

async function newPlan(quotas: Record<string, number | null> = {}, price = "0"): Promise<string> {
  const name = uniqueName("plan");
  const r = await admin.post("/v1/admin/plans", { name, price, quotas });
  expect(r.status, r.text).toBe(200);
  return name;
}

async function setPlan(org: string, plan: string): Promise<void> {
  const r = await admin.post(`/v1/admin/organizations/${org}/plan`, { plan });
  expect(r.status, r.text).toBe(200);
}

const UNLIMITED = {
  rows_read: null,
  rows_written: null,
  storage_bytes: null,
  databases: null,
  groups: null,
  locations: null,
  bytes_synced: null,
};

describe("plan administration", () => {
  it("creates, lists, updates and deletes plans with their quotas", async () => {
    const name = uniqueName("plan");
    const created = await admin.post("/v1/admin/plans", {
      name,
      price: 29,
      quotas: { rows_read: 1000, databases: 3 },
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body.plan).toEqual({
      name,
      price: "29",
      quotas: { ...UNLIMITED, rows_read: 1000, databases: 3 },
      created_at: expect.any(String),
    });

    const listed = await admin.get("/v1/admin/plans");
    expect(listed.body.plans.find((p: { name: string }) => p.name === name)).toMatchObject({
      organizations: 0,
      quotas: { rows_read: 1000, databases: 3 },
    });
    expect(listed.body.plans.map((p: { name: string }) => p.name)).toContain("self-hosted");

    // Absent quotas stay, null ones become unlimited.
    const updated = await admin.patch(`/v1/admin/plans/${name}`, {
      price: "4.99",
      quotas: { rows_read: null, groups: 2 },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.plan).toMatchObject({
      price: "4.99",
      quotas: { ...UNLIMITED, databases: 3, groups: 2 },
    });

    expect((await admin.delete(`/v1/admin/plans/${name}`)).body).toEqual({ plan: name });
    const after = await admin.get("/v1/admin/plans");
    expect(after.body.plans.map((p: { name: string }) => p.name)).not.toContain(name);
  });

  it("refuses invalid names, prices and quotas with a 400, creating nothing", async () => {
    const name = uniqueName("plan");
    const bad = [
      { name: "Not_A_Name" },
      { name, price: "cheap" },
      { name, price: "-1" },
      { name, quotas: { rows_read: -1 } },
      { name, quotas: { rows_written: 1.5 } },
      { name, quotas: { databases: "10" } },
    ];
    for (const body of bad) {
      const r = await admin.post("/v1/admin/plans", body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toEqual(expect.any(String));
    }
    const listed = await admin.get("/v1/admin/plans");
    expect(listed.body.plans.map((p: { name: string }) => p.name)).not.toContain(name);
    const plan = await newPlan({ groups: 1 });
    const r = await admin.patch(`/v1/admin/plans/${plan}`, { quotas: { groups: -2 } });
    expect(r.status).toBe(400);
    const still = await admin.get("/v1/admin/plans");
    expect(still.body.plans.find((p: { name: string }) => p.name === plan).quotas.groups).toBe(1);
  });

  it("refuses a second plan with the same name (409)", async () => {
    const name = await newPlan();
    const r = await admin.post("/v1/admin/plans", { name });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe(`plan ${name} already exists`);
  });

  it("refuses to delete a plan in use or the default plan (409), and answers 404 for an unknown one", async () => {
    const plan = await newPlan();
    const team = await createTeam(owner);
    await setPlan(team, plan);
    const inUse = await admin.delete(`/v1/admin/plans/${plan}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error).toMatch(/used by 1 organization/);
    const listed = await admin.get("/v1/admin/plans");
    expect(listed.body.plans.find((p: { name: string }) => p.name === plan).organizations).toBe(1);

    const fallback = await admin.delete("/v1/admin/plans/self-hosted");
    expect(fallback.status).toBe(409);
    expect(fallback.body.error).toMatch(/plan of new organizations/);

    expect((await admin.delete("/v1/admin/plans/no-such-plan")).status).toBe(404);
    const missing = await admin.patch("/v1/admin/plans/no-such-plan", { price: "1" });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe("plan no-such-plan not found");
  });

  it("refuses plan administration to anyone but the instance administrator (403)", async () => {
    const plan = await newPlan();
    for (const [method, path, body] of [
      ["get", "/v1/admin/plans", undefined],
      ["post", "/v1/admin/plans", { name: uniqueName("plan") }],
      ["patch", `/v1/admin/plans/${plan}`, { price: "100" }],
      ["delete", `/v1/admin/plans/${plan}`, undefined],
    ] as const) {
      const r =
        method === "get" || method === "delete"
          ? await owner.api[method](path)
          : await owner.api[method](path, body);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.error).toMatch(/instance administrator/);
    }
    expect(
      (await admin.get("/v1/admin/plans")).body.plans.find((p: { name: string }) => p.name === plan),
    ).toMatchObject({ price: "0" });
  });
});

describe("plans and the subscription, as members see them", () => {
  it("lists the plans in Turso's shape, camelCase quotas with null for unlimited", async () => {
    const plan = await newPlan({ rows_read: 5000, storage_bytes: 1_000_000, databases: 10 }, "29");
    const team = await createTeam(owner);
    for (const path of [`/v1/organizations/${team}/plans`, "/v1/plans"]) {
      const r = await owner.api.get(path);
      expect(r.status, r.text).toBe(200);
      expect(r.body.plans.find((p: { name: string }) => p.name === plan)).toEqual({
        name: plan,
        price: "29",
        prices: [{ value: "29", timeline: "monthly" }],
        quotas: {
          rowsRead: 5000,
          rowsWritten: null,
          databases: 10,
          locations: null,
          storage: 1_000_000,
          groups: null,
          bytesSynced: null,
        },
      });
    }
  });

  it("reports the subscription in the shape the turso CLI parses", async () => {
    const team = await createTeam(owner);
    const r = await owner.api.get(`/v1/organizations/${team}/subscription`);
    expect(r.body).toEqual({
      subscription: { name: "self-hosted", overages: false, plan: "self-hosted", timeline: "monthly" },
    });
    // The CLI's personal-organization path.
    const personal = await owner.api.get("/v1/subscription");
    expect(personal.body.subscription.plan).toBe("self-hosted");
  });

  it("lets only the instance administrator change an organization's plan, and audits it", async () => {
    const plan = await newPlan({ databases: 5 });
    const team = await createTeam(owner);
    const refused = await owner.api.post(`/v1/organizations/${team}/subscription`, { plan });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/only the instance administrator can change an organization's plan/);
    expect((await owner.api.get(`/v1/organizations/${team}/subscription`)).body.subscription.plan).toBe(
      "self-hosted",
    );

    // What the turso CLI's `plan select` sends.
    const set = await admin.post(`/v1/organizations/${team}/subscription`, { plan, timeline: "monthly" });
    expect(set.status, set.text).toBe(200);
    expect(set.body.subscription).toEqual({ name: plan, overages: false, plan, timeline: "monthly" });
    expect((await owner.api.get(`/v1/organizations/${team}/subscription`)).body.subscription.name).toBe(plan);

    const log = await owner.api.get(`/v1/organizations/${team}/audit-logs`);
    expect(log.body.audit_logs[0]).toMatchObject({
      code: "org-plan-update",
      author: "admin",
      data: { plan, previous: "self-hosted" },
    });
  });

  it("refuses an unknown plan (400) and an unknown organization (404) when setting a plan", async () => {
    const team = await createTeam(owner);
    const unknownPlan = await admin.post(`/v1/admin/organizations/${team}/plan`, { plan: "no-such-plan" });
    expect(unknownPlan.status).toBe(400);
    expect(unknownPlan.body.error).toBe("unknown plan: no-such-plan");
    const noPlan = await admin.post(`/v1/admin/organizations/${team}/plan`, {});
    expect(noPlan.status).toBe(400);
    const unknownOrg = await admin.post("/v1/admin/organizations/no-such-org/plan", { plan: "self-hosted" });
    expect(unknownOrg.status).toBe(404);
    expect(unknownOrg.body.error).toBe("organization not found");
  });
});

describe("quotas on what an organization holds", () => {
  it("refuses a database past the plan's quota with a clear 402, until overages are on", async () => {
    const plan = await newPlan({ databases: 1 });
    const team = await createTeam(owner);
    await setPlan(team, plan);
    await createGroup(owner, team, "default");
    const dbs = `/v1/organizations/${team}/databases`;
    expect((await owner.api.post(dbs, { name: "first", group: "default" })).status).toBe(200);
    const refused = await owner.api.post(dbs, { name: "second", group: "default" });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toBe(
      `the ${plan} plan of organization ${team} allows 1 databases and it has 1; ask the instance administrator for a larger plan, or turn overages on`,
    );
    expect((await owner.api.get(dbs)).body.databases).toHaveLength(1);

    expect((await owner.api.patch(`/v1/organizations/${team}`, { overages: true })).status).toBe(200);
    expect((await owner.api.post(dbs, { name: "second", group: "default" })).status).toBe(200);
  });

  it("refuses a group past the plan's group quota (402), and a larger plan allows it", async () => {
    const small = await newPlan({ groups: 1 });
    const large = await newPlan({ groups: 2 });
    const team = await createTeam(owner);
    await setPlan(team, small);
    await createGroup(owner, team, "default");
    const groups = `/v1/organizations/${team}/groups`;
    const refused = await owner.api.post(groups, { name: "second", location: "aws-us-east-1" });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatch(/allows 1 groups and it has 1/);
    expect((await owner.api.get(groups)).body.groups).toHaveLength(1);

    await setPlan(team, large);
    expect((await owner.api.post(groups, { name: "second", location: "aws-us-east-1" })).status).toBe(200);
  });

  it("refuses a location past the plan's location quota (402)", async () => {
    const plan = await newPlan({ locations: 1 });
    const team = await createTeam(owner);
    await setPlan(team, plan);
    await createGroup(owner, team, "default", "aws-us-east-1");
    const r = await owner.api.post(`/v1/organizations/${team}/groups/default/locations/aws-eu-west-1`);
    expect(r.status).toBe(402);
    expect(r.body.error).toMatch(/allows 1 locations/);
  });
});
