import { createClient, type Client as SqlClient } from "@libsql/client";
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
import { type Client, client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let admin: Client;
let owner: TestUser;

// Flushes every 20 ms, so blocked organizations without new usage are looked at every 200 ms.
beforeAll(async () => {
  h = await startTestShoal({ usageFlushIntervalMs: 20 });
  admin = client(h.url, h.adminToken);
  owner = await createUser(h);
});
afterAll(() => h.close());

async function newPlan(quotas: Record<string, number>): Promise<string> {
  const plan = uniqueName("plan");
  expect((await admin.post("/v1/admin/plans", { name: plan, quotas })).status).toBe(200);
  return plan;
}

async function setPlan(team: string, plan: string): Promise<void> {
  expect((await admin.post(`/v1/admin/organizations/${team}/plan`, { plan })).status).toBe(200);
}

async function sqlClient(team: string, db: string, at = ""): Promise<SqlClient> {
  return createClient({
    url: `${h.url}/db/${team}/${db}${at}/`,
    authToken: await mintToken(owner, team, db),
  });
}

const orgOf = async (team: string) => (await owner.api.get(`/v1/organizations/${team}`)).body.organization;
const insert = (c: SqlClient) => c.execute("INSERT INTO t (v) VALUES ('x')");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("quota blocks in the data plane", () => {
  it("lifts a block when a new calendar month starts, without any new usage", async () => {
    const team = await createTeam(owner);
    await createGroup(owner, team, "default");
    await createDatabase(owner, team, "app");
    const c = await sqlClient(team, "app");
    await c.execute("CREATE TABLE t (v TEXT)");
    await insert(c);
    await setPlan(team, await newPlan({ rows_written: 1 }));
    await expect(insert(c)).rejects.toMatchObject({ code: "BLOCKED" });

    const real = h.shoal.deps.clock;
    const now = real();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 0, 1));
    h.shoal.deps.clock = () => nextMonth;
    try {
      // The first flush in a new month looks at every blocked organization.
      await h.shoal.deps.meter.flush();
      expect(await orgOf(team)).toMatchObject({ blocked_writes: false });
      await insert(c);
      const log = await owner.api.get(`/v1/organizations/${team}/audit-logs`);
      expect(log.body.audit_logs[0]).toMatchObject({
        code: "org-quota-block",
        author: "shoal:usage",
        message: "block lifted: usage is within the plan",
        data: { period: nextMonth.toISOString().slice(0, 7) },
      });
    } finally {
      h.shoal.deps.clock = real;
    }
  });

  it("refuses reads at a replica location when the rows-read quota is used up", async () => {
    const team = await createTeam(owner);
    await createGroup(owner, team, "default", "aws-us-east-1");
    expect(
      (await owner.api.post(`/v1/organizations/${team}/groups/default/locations/aws-eu-west-1`)).status,
    ).toBe(200);
    await createDatabase(owner, team, "app");
    const primary = await sqlClient(team, "app");
    await primary.execute("CREATE TABLE t (v TEXT)");
    await insert(primary);
    const replica = await sqlClient(team, "app", "@aws-eu-west-1");
    expect((await replica.execute("SELECT * FROM t")).rows).toHaveLength(1);

    await setPlan(team, await newPlan({ rows_read: 0 }));
    await expect(replica.execute("SELECT * FROM t")).rejects.toMatchObject({
      code: "BLOCKED",
      message: expect.stringContaining(`organization ${team} used up its plan's quota`),
    });
    await expect(insert(replica)).rejects.toMatchObject({ code: "BLOCKED" });
  });

  it("lifts a storage block once deleting a database for good brings the files under the quota", async () => {
    const team = await createTeam(owner);
    await createGroup(owner, team, "default");
    await createDatabase(owner, team, "big");
    await createDatabase(owner, team, "small");
    const big = await sqlClient(team, "big");
    await big.execute("CREATE TABLE t (v BLOB)");
    await big.execute("INSERT INTO t VALUES (randomblob(200000))");
    const small = await sqlClient(team, "small");
    await small.execute("CREATE TABLE t (v TEXT)");
    const usage = await owner.api.get(`/v1/organizations/${team}/usage`);
    const sizeOf = (id: string) =>
      usage.body.organization.databases.find((d: { uuid: string }) => d.uuid === id).usage
        .storage_bytes as number;
    const ids = (await owner.api.get(`/v1/organizations/${team}/databases`)).body.databases as Array<{
      Name: string;
      DbId: string;
    }>;
    const smallBytes = sizeOf(ids.find((d) => d.Name === "small")!.DbId);

    await setPlan(team, await newPlan({ storage_bytes: smallBytes + 4096 }));
    await expect(insert(small)).rejects.toMatchObject({ code: "BLOCKED" });
    expect((await small.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(0);

    // A deleted database kept restorable still counts: with recovery off, a deletion is final.
    expect((await owner.api.patch(`/v1/organizations/${team}`, { restore_enabled: false })).status).toBe(200);
    expect((await owner.api.delete(`/v1/organizations/${team}/databases/big`)).status).toBe(200);
    // No new usage: the next sweep of blocked organizations lifts it.
    for (let i = 0; i < 200 && (await orgOf(team)).blocked_writes; i++) await sleep(25);
    expect(await orgOf(team)).toMatchObject({ blocked_writes: false });
    await insert(small);
  });
});
