import { createClient as createDbClient } from "@libsql/client";
import { createClient as createApiClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../helpers/dataplane.js";
import {
  addMember,
  createDatabase,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
} from "../helpers/factories.js";
import { type Client, client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let admin: Client;
let owner: TestUser;
let viewer: TestUser;
let team: string;
const ids: Record<string, string> = {};

const thisMonth = () => new Date().toISOString().slice(0, 7);
const org = (p = "") => `/v1/organizations/${team}${p}`;

beforeAll(async () => {
  h = await startTestShoal();
  admin = client(h.url, h.adminToken);
  owner = await createUser(h);
  viewer = await createUser(h);
  team = await createTeam(owner);
  await addMember(owner, team, viewer.username, "viewer");
  await createGroup(owner, team, "default", "aws-us-east-1");
  await createGroup(owner, team, "other", "aws-eu-west-1");
  for (const [name, group] of [
    ["alpha", "default"],
    ["beta", "other"],
    ["gone", "default"],
  ] as const) {
    const db = await createDatabase(owner, team, name, group);
    ids[name] = db.DbId;
    const sql = createDbClient({
      url: `${h.url}/db/${team}/${name}/`,
      authToken: await mintToken(owner, team, name),
    });
    await sql.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    sql.close();
  }
  const alpha = createDbClient({
    url: `${h.url}/db/${team}/alpha/`,
    authToken: await mintToken(owner, team, "alpha"),
  });
  for (let i = 0; i < 4; i++) await alpha.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`a${i}`] }); // 4 written
  await alpha.execute("SELECT * FROM t"); // 4 read
  alpha.close();
  const beta = createDbClient({
    url: `${h.url}/db/${team}/beta/`,
    authToken: await mintToken(owner, team, "beta"),
  });
  await beta.execute("INSERT INTO t (v) VALUES ('b0'), ('b1')"); // 2 written
  beta.close();
  const gone = createDbClient({
    url: `${h.url}/db/${team}/gone/`,
    authToken: await mintToken(owner, team, "gone"),
  });
  await gone.execute("INSERT INTO t (v) VALUES ('g0')"); // 1 written, then the database goes
  gone.close();
  expect((await owner.api.delete(org("/databases/gone"))).status).toBe(200);
});
afterAll(() => h.close());

describe("organization usage", () => {
  it("reports this month's rows (deleted databases included), real storage and holdings", async () => {
    const r = await viewer.api.get(org("/usage"));
    expect(r.status, r.text).toBe(200);
    const o = r.body.organization;
    expect(o.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(o.usage).toEqual({
      rows_read: 4,
      rows_written: 7,
      databases: 2,
      locations: 2,
      storage_bytes: expect.any(Number),
      groups: 2,
      bytes_synced: 0,
    });
    expect(o.databases.map((d: { uuid: string }) => d.uuid).sort()).toEqual([ids.alpha, ids.beta].sort());
    const alpha = o.databases.find((d: { uuid: string }) => d.uuid === ids.alpha);
    expect(alpha.usage).toEqual({
      rows_read: 4,
      rows_written: 4,
      storage_bytes: expect.any(Number),
      bytes_synced: 0,
    });
    expect(alpha.total).toEqual(alpha.usage);
    expect(alpha.instances).toEqual([{ uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), usage: alpha.usage }]);
    expect(alpha.usage.storage_bytes).toBeGreaterThan(0);
    const stored = o.databases.reduce(
      (n: number, d: { usage: { storage_bytes: number } }) => n + d.usage.storage_bytes,
      0,
    );
    expect(o.usage.storage_bytes).toBe(stored);
  });

  it("matches what each database's own usage route reports", async () => {
    const own = await owner.api.get(org("/databases/alpha/usage"));
    const all = await owner.api.get(org("/usage"));
    const alpha = all.body.organization.databases.find((d: { uuid: string }) => d.uuid === ids.alpha);
    expect(alpha).toEqual(own.body.database);
  });

  it("answers on the turso CLI's personal-organization path", async () => {
    const r = await owner.api.get("/v1/usage");
    expect(r.status).toBe(200);
    expect(r.body.organization.usage).toMatchObject({ rows_read: 0, rows_written: 0, databases: 0 });
  });
});

describe("invoices", () => {
  it("shows the current month as the upcoming invoice, line by line against the plan", async () => {
    const plan = "billing-plan";
    expect(
      (await admin.post("/v1/admin/plans", { name: plan, price: "12.5", quotas: { rows_written: 5 } }))
        .status,
    ).toBe(200);
    expect((await admin.post(`/v1/admin/organizations/${team}/plan`, { plan })).status).toBe(200);
    const r = await viewer.api.get(org("/invoices?type=upcoming"));
    expect(r.status, r.text).toBe(200);
    const month = thisMonth();
    const next = new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 1)).toISOString();
    expect(r.body.invoices).toEqual([
      {
        invoice_number: `${team.toUpperCase()}-${month.replace("-", "")}`,
        amount_due: "12.50",
        due_date: next,
        paid_at: "",
        payment_failed_at: "",
        invoice_pdf: "",
        hosted_invoice_url: "",
        status: "upcoming",
        plan,
        period_start: `${month}-01T00:00:00.000Z`,
        period_end: next,
        lines: [
          { item: "rows_read", used: 4, included: null, over: 0 },
          { item: "rows_written", used: 7, included: 5, over: 2 },
          { item: "storage_bytes", used: expect.any(Number), included: null, over: 0 },
        ],
      },
    ]);
    expect((await admin.post(`/v1/admin/organizations/${team}/plan`, { plan: "self-hosted" })).status).toBe(
      200,
    );
  });

  it("lists past months that had usage as issued invoices, newest first", async () => {
    // Usage of earlier months, as the meter would have stored it then.
    const orgId = (await owner.api.get(org("/usage"))).body.organization.uuid as string;
    await h.shoal.deps.store.write((r) =>
      r.usage.add([
        { dbId: ids.alpha!, orgId, day: "2001-02-03", rowsRead: 10, rowsWritten: 3, queries: 2 },
        { dbId: ids.beta!, orgId, day: "2001-02-20", rowsRead: 5, rowsWritten: 1, queries: 1 },
        { dbId: ids.alpha!, orgId, day: "2001-05-09", rowsRead: 1, rowsWritten: 0, queries: 1 },
      ]),
    );
    const issued = await owner.api.get(org("/invoices?type=issued"));
    expect(issued.status).toBe(200);
    expect(issued.body.invoices.map((i: { invoice_number: string }) => i.invoice_number)).toEqual([
      `${team.toUpperCase()}-200105`,
      `${team.toUpperCase()}-200102`,
    ]);
    expect(issued.body.invoices[1]).toMatchObject({
      status: "issued",
      amount_due: "0.00",
      period_start: "2001-02-01T00:00:00.000Z",
      period_end: "2001-03-01T00:00:00.000Z",
      lines: [
        { item: "rows_read", used: 15, included: null, over: 0 },
        { item: "rows_written", used: 4, included: null, over: 0 },
      ],
    });
    const all = await owner.api.get(org("/invoices?type=all"));
    expect(all.body.invoices.map((i: { status: string }) => i.status)).toEqual([
      "upcoming",
      "issued",
      "issued",
    ]);
    expect((await owner.api.get(org("/invoices"))).body).toEqual(all.body);
  });

  it("refuses an unknown invoice type (400)", async () => {
    const r = await owner.api.get(org("/invoices?type=paid"));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/type/);
  });

  it("works with the official TS client", async () => {
    const turso = createApiClient({ org: team, token: owner.token, baseUrl: h.apiBase });
    const invoices = await turso.organizations.invoices();
    expect(invoices[0]).toMatchObject({ invoice_number: expect.any(String), amount_due: expect.any(String) });
  });

  it("refuses a group-scoped token with every scope (403)", async () => {
    const minted = await owner.api.post("/v1/auth/api-tokens/billing-scoped", {
      organization: team,
      group: "default",
      scopes: ["full-access"],
    });
    const scoped = client(h.url, minted.body.token);
    for (const path of ["/usage", "/invoices"]) {
      const r = await scoped.get(org(path));
      expect(r.status).toBe(403);
      expect(r.body.error).toMatch(/group-scoped API token/);
    }
    expect((await scoped.get(org("/subscription"))).status).toBe(200);
  });
});
