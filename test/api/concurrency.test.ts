/**
 * Requests that lock the same rows in different orders, or move things while they are being
 * deleted, sent at the same time. On PostgreSQL these are real concurrent transactions; on the
 * embedded store they run one after the other. Either way: no 500, and no file lost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipeline, sql } from "../helpers/dataplane.js";
import { createGroup, createTeam, createUser, type TestUser, uniqueName } from "../helpers/factories.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let owner: TestUser;

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
});
afterAll(() => h.close());

describe("concurrent requests on the same organization", () => {
  it("never answers 500 when creates on a capped plan race location changes of their group", async () => {
    const admin = client(h.url, h.adminToken);
    const plan = uniqueName("capped");
    expect(
      (await admin.post("/v1/admin/plans", { name: plan, price: "0", quotas: { databases: 1000 } })).status,
    ).toBe(200);
    const team = await createTeam(owner);
    expect((await admin.post(`/v1/admin/organizations/${team}/plan`, { plan })).status).toBe(200);
    await createGroup(owner, team, "default");
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const location = i % 2 === 0 ? "aws-eu-west-1" : "aws-us-west-2";
      const answers = await Promise.all([
        owner.api.post(`/v1/organizations/${team}/databases`, { name: `race-${i}`, group: "default" }),
        owner.api.post(`/v1/organizations/${team}/groups/default/locations/${location}`),
        owner.api.post(`/v1/organizations/${team}/databases`, { name: `race-${i}-b`, group: "default" }),
        owner.api.delete(`/v1/organizations/${team}/groups/default/locations/${location}`),
      ]);
      statuses.push(...answers.map((a) => a.status));
    }
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    const listed = await owner.api.get(`/v1/organizations/${team}/databases`);
    expect(listed.body.databases).toHaveLength(16);
  });

  it("keeps the data of a group transferred away while its organization is being deleted", async () => {
    for (let i = 0; i < 4; i++) {
      const from = await createTeam(owner);
      const to = await createTeam(owner);
      await createGroup(owner, from, "moving");
      const created = await owner.api.post(`/v1/organizations/${from}/databases`, {
        name: "kept",
        group: "moving",
      });
      expect(created.status, created.text).toBe(200);
      const jwt = (await owner.api.post(`/v1/organizations/${from}/databases/kept/auth/tokens`)).body.jwt;
      const write = await pipeline(`${h.url}/db/${from}/kept/`, jwt, {
        requests: [sql("create table t (v)"), sql("insert into t values ('precious')")],
      });
      expect(write.status).toBe(200);
      const [moved, deleted] = await Promise.all([
        owner.api.post(`/v1/organizations/${from}/groups/moving/transfer`, { organization: to }),
        owner.api.delete(`/v1/organizations/${from}`),
      ]);
      expect([moved.status, deleted.status].filter((s) => s >= 500)).toEqual([]);
      expect(deleted.status, deleted.text).toBe(200);
      if (moved.status !== 200) continue;
      // The transfer won: the database lives on in the other organization, with its rows.
      const token = (await owner.api.post(`/v1/organizations/${to}/databases/kept/auth/tokens`)).body.jwt;
      const read = await pipeline(`${h.url}/db/${to}/kept/`, token, { requests: [sql("select v from t")] });
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      expect(read.body.results[0].response.result.rows).toEqual([[{ type: "text", value: "precious" }]]);
    }
  });
});
