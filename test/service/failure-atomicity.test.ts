import { existsSync, writeFileSync } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, createGroup, createUser, type TestUser } from "../helpers/factories.js";
import { instanceFile } from "../helpers/files.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
});
afterAll(() => h.close());

/** Makes a location's folder impossible to create by putting a plain file where it should be. */
async function breakLocation(location: string): Promise<void> {
  await mkdir(path.join(h.dataDir, "locations"), { recursive: true });
  writeFileSync(path.join(h.dataDir, "locations", location), "not a folder");
}

describe("a failure part-way leaves nothing half-written", () => {
  it("rolls back a database create when the primary's file can't be made", async () => {
    await breakLocation("aws-us-east-2");
    await createGroup(u, u.username, "fragile", "aws-us-east-2");
    const r = await u.api.post(`/v1/organizations/${u.username}/databases`, {
      name: "torn",
      group: "fragile",
    });
    expect(r.status).toBe(500);
    expect(r.body.error).toMatch(/^internal error \(request [0-9a-f-]+\)$/);
    expect((await u.api.get(`/v1/organizations/${u.username}/databases/torn`)).status).toBe(404);
    // The name is free: nothing was left behind.
    expect((await u.api.get(`/v1/organizations/${u.username}/databases`)).body.databases).toEqual([]);
  });

  it("keeps a created database serving when a replica location can't take its replica", async () => {
    await createGroup(u, u.username, "degraded", "aws-us-west-2");
    // An empty group builds no replicas, so the new location has no folder yet: break it.
    expect(
      (await u.api.post(`/v1/organizations/${u.username}/groups/degraded/locations/aws-ap-south-1`)).status,
    ).toBe(200);
    await breakLocation("aws-ap-south-1");
    const r = await u.api.post(`/v1/organizations/${u.username}/databases`, {
      name: "still-up",
      group: "degraded",
    });
    expect(r.status, r.text).toBe(200);
    expect(existsSync(instanceFile(h.dataDir, "aws-us-west-2", r.body.database.DbId))).toBe(true);
    expect(existsSync(instanceFile(h.dataDir, "aws-ap-south-1", r.body.database.DbId))).toBe(false);
  });

  it("rolls back an add-location when its replicas can't be built, removing what was made", async () => {
    await createGroup(u, u.username, "seeded", "aws-us-west-2");
    const d = await createDatabase(u, u.username, "seed-me", "seeded");
    await breakLocation("aws-ap-northeast-1");
    const r = await u.api.post(`/v1/organizations/${u.username}/groups/seeded/locations/aws-ap-northeast-1`);
    expect(r.status).toBe(503);
    expect(r.body.error).toMatch(/could not be added/);
    const g = await u.api.get(`/v1/organizations/${u.username}/groups/seeded`);
    expect(g.body.group.locations).toEqual(["aws-us-west-2"]);
    expect(existsSync(instanceFile(h.dataDir, "aws-us-west-2", d.DbId))).toBe(true);
  });
});

describe("concurrent requests", () => {
  it("gives exactly one success when many clients create the same database at once", async () => {
    await createGroup(u, u.username, "race", "aws-us-east-1");
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        u.api.post(`/v1/organizations/${u.username}/databases`, { name: "contested", group: "race" }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(11);
    const winner = results.find((r) => r.status === 200)!.body.database.DbId;
    const files = await readdir(path.join(h.dataDir, "locations", "aws-us-east-1"));
    expect(files.filter((f) => f.endsWith(".db"))).toContain(`${winner}.db`);
  });

  it("gives every database created during an add-location an instance in the new location", async () => {
    await createGroup(u, u.username, "busy", "aws-us-east-1");
    for (let i = 0; i < 5; i++) await createDatabase(u, u.username, `busy-${i}`, "busy");
    const adding = u.api.post(`/v1/organizations/${u.username}/groups/busy/locations/aws-eu-west-1`);
    const creating = Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        u.api.post(`/v1/organizations/${u.username}/databases`, { name: `busy-new-${i}`, group: "busy" }),
      ),
    );
    expect((await adding).status).toBe(200);
    const created = await creating;
    const all = await u.api.get(`/v1/organizations/${u.username}/databases?group=busy`);
    expect(all.body.databases).toHaveLength(10);
    for (const d of all.body.databases) {
      expect(existsSync(instanceFile(h.dataDir, "aws-eu-west-1", d.DbId)), d.Name).toBe(true);
    }
    expect(created.every((r) => r.status === 200)).toBe(true);
  });
});
