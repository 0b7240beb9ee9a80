import { createClient as createDbClient, type Client as SqlClient } from "@libsql/client";
import { createClient as createApiClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../helpers/dataplane.js";
import {
  createDatabase,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
  uniqueName,
} from "../helpers/factories.js";
import { type Client, call, client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let admin: Client;
let owner: TestUser;

// A short flush interval: usage reaches the store, and quotas are judged, every 50 ms.
beforeAll(async () => {
  h = await startTestShoal({ usageFlushIntervalMs: 50 });
  admin = client(h.url, h.adminToken);
  owner = await createUser(h);
});
afterAll(() => h.close());

interface Tenant {
  team: string;
  plan: string;
  sql: SqlClient;
  ws: SqlClient;
}

/** A team on a new plan with these quotas, holding one database with a table of `rows` rows. */
async function tenant(quotas: Record<string, number | null>, rows = 0): Promise<Tenant> {
  const plan = uniqueName("plan");
  expect((await admin.post("/v1/admin/plans", { name: plan, quotas: {} })).status).toBe(200);
  const team = await createTeam(owner);
  expect((await admin.post(`/v1/admin/organizations/${team}/plan`, { plan })).status).toBe(200);
  await createGroup(owner, team, "default");
  await createDatabase(owner, team, "app");
  const token = await mintToken(owner, team, "app");
  const sql = createDbClient({ url: `${h.url}/db/${team}/app/`, authToken: token });
  const ws = createDbClient({ url: `${h.url.replace("http:", "ws:")}/db/${team}/app`, authToken: token });
  await sql.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  for (let i = 0; i < rows; i++) await sql.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`r${i}`] });
  // The quotas apply from here: the setup's own usage is under the unlimited plan's watch.
  expect((await admin.patch(`/v1/admin/plans/${plan}`, { quotas })).status).toBe(200);
  return { team, plan, sql, ws };
}

const orgOf = async (team: string) => (await owner.api.get(`/v1/organizations/${team}`)).body.organization;
const insert = (c: SqlClient) => c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: ["x"] });
const count = async (c: SqlClient) => Number((await c.execute("SELECT count(*) AS n FROM t")).rows[0]!.n);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes one row at a time until the data plane refuses; returns how many went in and the refusal. */
async function writeUntilBlocked(
  c: SqlClient,
): Promise<{ written: number; error: { code?: string; message: string } }> {
  for (let written = 0; written < 500; written++) {
    try {
      await insert(c);
    } catch (e) {
      return { written, error: e as { code?: string; message: string } };
    }
    await sleep(10);
  }
  throw new Error("the organization was never blocked");
}

describe("overages: the issue's end-to-end scenario", () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant({ rows_written: 5 });
  });

  it("blocks writes with BLOCKED once the rows-written quota is used up, and still serves reads", async () => {
    const { written, error } = await writeUntilBlocked(t.sql);
    expect(written).toBeGreaterThanOrEqual(5);
    expect(error.code).toBe("BLOCKED");
    expect(error.message).toMatch(new RegExp(`organization ${t.team} used up its plan's quota`));
    await expect(insert(t.ws)).rejects.toMatchObject({ code: "BLOCKED" });
    expect(await count(t.sql)).toBe(written);
    const org = await orgOf(t.team);
    expect(org).toMatchObject({ overages: false, blocked_reads: false, blocked_writes: true });
  });

  it("lifts the block the moment overages are turned on through the TS client", async () => {
    const turso = createApiClient({ org: t.team, token: owner.token, baseUrl: h.apiBase });
    const org = await turso.organizations.update({ overages: true });
    expect(org).toMatchObject({ overages: true, blocked_reads: false, blocked_writes: false });
    const before = await count(t.sql);
    await insert(t.sql);
    await insert(t.ws);
    expect(await count(t.sql)).toBe(before + 2);
  });

  it("shows the block, the overages change and the lift in the audit log", async () => {
    const r = await owner.api.get(`/v1/organizations/${t.team}/audit-logs`);
    expect(r.status).toBe(200);
    const entries = r.body.audit_logs as Array<{ code: string; author: string; data: any; message: string }>;
    expect(entries.slice(0, 3).map((e) => e.code)).toEqual([
      "org-quota-block",
      "org-set-overages",
      "org-quota-block",
    ]);
    const [lift, overages, block] = entries;
    expect(lift).toMatchObject({
      author: owner.username,
      data: { blocked_reads: false, blocked_writes: false },
      message: "block lifted: overages are on",
    });
    expect(overages).toMatchObject({ author: owner.username, data: { overages: true } });
    expect(block).toMatchObject({
      author: "shoal:usage",
      data: { blocked_reads: false, blocked_writes: true, plan: t.plan },
    });
    expect(block!.message).toMatch(
      /^writes blocked: the .* plan's quota is used up \(rows written: \d+ of 5\)$/,
    );
  });

  it("blocks again at once when overages are turned off past the quota (body sent with no content type)", async () => {
    const r = await call(h.url, "PATCH", `/v1/organizations/${t.team}`, {
      token: owner.token,
      body: JSON.stringify({ overages: false }),
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.organization).toMatchObject({ overages: false, blocked_writes: true });
    await expect(insert(t.sql)).rejects.toMatchObject({ code: "BLOCKED" });
  });

  it("lifts the block at once when the administrator raises the plan's quota", async () => {
    const r = await admin.patch(`/v1/admin/plans/${t.plan}`, { quotas: { rows_written: 1_000_000 } });
    expect(r.status).toBe(200);
    await insert(t.sql);
    expect(await orgOf(t.team)).toMatchObject({ blocked_writes: false });
  });
});

describe("what each quota blocks", () => {
  it("blocks reads and writes once the rows-read quota is used up", async () => {
    const t = await tenant({ rows_read: 3 }, 5);
    expect((await t.sql.execute("SELECT * FROM t")).rows).toHaveLength(5);
    // Reading the usage flushes the counts and judges the quotas at once.
    expect((await owner.api.get(`/v1/organizations/${t.team}/usage`)).body.organization.usage.rows_read).toBe(
      5,
    );
    expect(await orgOf(t.team)).toMatchObject({ blocked_reads: true, blocked_writes: false });
    await expect(t.sql.execute("SELECT 1")).rejects.toMatchObject({ code: "BLOCKED" });
    await expect(t.ws.execute("SELECT * FROM t")).rejects.toMatchObject({ code: "BLOCKED" });
    await expect(insert(t.sql)).rejects.toMatchObject({ code: "BLOCKED" });

    expect((await owner.api.patch(`/v1/organizations/${t.team}`, { overages: true })).status).toBe(200);
    expect(await count(t.sql)).toBe(5);
  });

  it("blocks writes as soon as a plan's storage quota is below what the files take", async () => {
    const t = await tenant({}, 3);
    const other = uniqueName("plan");
    expect(
      (await admin.post("/v1/admin/plans", { name: other, quotas: { storage_bytes: 1024 } })).status,
    ).toBe(200);
    const r = await admin.post(`/v1/admin/organizations/${t.team}/plan`, { plan: other });
    expect(r.status).toBe(200);
    expect(await orgOf(t.team)).toMatchObject({ blocked_reads: false, blocked_writes: true });
    await expect(insert(t.sql)).rejects.toMatchObject({ code: "BLOCKED" });
    expect(await count(t.sql)).toBe(3);

    // Back on the unlimited plan: lifted in the same request.
    expect((await admin.post(`/v1/admin/organizations/${t.team}/plan`, { plan: t.plan })).status).toBe(200);
    await insert(t.sql);
  });

  it("never blocks an organization with overages on; its invoice shows the usage past the quota", async () => {
    const t = await tenant({ rows_written: 2 });
    expect((await owner.api.patch(`/v1/organizations/${t.team}`, { overages: true })).status).toBe(200);
    for (let i = 0; i < 6; i++) await insert(t.sql);
    await owner.api.get(`/v1/organizations/${t.team}/usage`);
    expect(await orgOf(t.team)).toMatchObject({ blocked_writes: false });
    const inv = await owner.api.get(`/v1/organizations/${t.team}/invoices?type=upcoming`);
    expect(inv.body.invoices[0].lines[1]).toEqual({ item: "rows_written", used: 6, included: 2, over: 4 });
    const sub = await owner.api.get(`/v1/organizations/${t.team}/subscription`);
    expect(sub.body.subscription).toMatchObject({ plan: t.plan, overages: true });
  });

  it("leaves other organizations of the same user unblocked", async () => {
    // A quota of 0 is used up from the start: the plan change blocks at once.
    const blocked = await tenant({ rows_written: 0 });
    const free = await tenant({});
    await expect(insert(blocked.sql)).rejects.toMatchObject({ code: "BLOCKED" });
    await insert(free.sql);
    expect(await orgOf(free.team)).toMatchObject({ blocked_writes: false });
  });
});
