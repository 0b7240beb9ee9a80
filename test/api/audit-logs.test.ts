import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addMember,
  createDatabase,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
} from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let owner: TestUser;
let viewer: TestUser;
let team: string;
const logs = (q = "") => `/v1/organizations/${team}/audit-logs${q}`;

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  viewer = await createUser(h);
  team = await createTeam(owner);
  await addMember(owner, team, viewer.username, "viewer");
  // Some entries to page through: a group and five databases.
  await createGroup(owner, team);
  for (let i = 0; i < 5; i++) {
    const r = await owner.api.post(`/v1/organizations/${team}/databases`, {
      name: `db-${i}`,
      group: "default",
    });
    expect(r.status, r.text).toBe(200);
  }
});
afterAll(() => h.close());

describe("the audit log", () => {
  it("honours limit and pages with cursor until pagination.next is null, like the other lists", async () => {
    const all = await owner.api.get(logs());
    const total = all.body.audit_logs.length as number;
    expect(total).toBeGreaterThanOrEqual(7);
    const seen: string[] = [];
    let next: string | null = null;
    do {
      const r = await owner.api.get(logs(`?limit=2${next ? `&cursor=${encodeURIComponent(next)}` : ""}`));
      expect(r.status, r.text).toBe(200);
      expect(r.body.audit_logs.length).toBeLessThanOrEqual(2);
      expect(r.body.pagination.page_size).toBe(2);
      seen.push(...r.body.audit_logs.map((e: any) => `${e.code} ${e.created_at} ${JSON.stringify(e.data)}`));
      next = r.body.pagination.next;
    } while (next !== null);
    expect(seen).toEqual(
      all.body.audit_logs.map((e: any) => `${e.code} ${e.created_at} ${JSON.stringify(e.data)}`),
    );
  });

  it("takes page_size as before, and the same size in both spellings", async () => {
    expect((await owner.api.get(logs("?page_size=3"))).body.audit_logs).toHaveLength(3);
    expect((await owner.api.get(logs("?limit=3&page_size=3"))).body.audit_logs).toHaveLength(3);
    expect((await owner.api.get(logs("?limit=1&page=2"))).body.audit_logs).toHaveLength(1);
  });

  it("refuses sizes out of range, two sizes that disagree, and a viewer", async () => {
    for (const q of ["?limit=0", "?limit=1001", "?limit=abc", "?limit=2&page_size=3"]) {
      const r = await owner.api.get(logs(q));
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toEqual(expect.any(String));
    }
    expect((await owner.api.get(logs("?limit=0"))).body.error).toBe("limit must be between 1 and 1000");
    expect((await viewer.api.get(logs("?limit=2"))).status).toBe(403);
  });

  it("records a location added and removed, named as the instance when done through a database", async () => {
    const loc = `/v1/organizations/${team}/groups/default/locations/aws-eu-west-1`;
    expect((await owner.api.post(loc)).status).toBe(200);
    expect((await owner.api.delete(loc)).status).toBe(200);
    await createGroup(owner, team, "solo");
    await createDatabase(owner, team, "alone", "solo");
    const inst = `/v1/organizations/${team}/databases/alone/instances`;
    expect((await owner.api.post(inst, { location: "aws-eu-west-1" })).status).toBe(200);
    expect((await owner.api.delete(`${inst}/aws-eu-west-1`)).status).toBe(200);
    const entries = (await owner.api.get(logs("?limit=6"))).body.audit_logs as any[];
    const located = entries.filter((e) => e.data.location === "aws-eu-west-1");
    expect(located.map((e) => [e.code, e.message, e.data]).reverse()).toEqual([
      [
        "group-location-add",
        "location aws-eu-west-1 added to group default",
        { group: "default", location: "aws-eu-west-1" },
      ],
      [
        "group-location-remove",
        "location aws-eu-west-1 removed from group default",
        { group: "default", location: "aws-eu-west-1" },
      ],
      [
        "instance-create",
        "instance aws-eu-west-1 of database alone created: location aws-eu-west-1 added to group solo",
        { group: "solo", location: "aws-eu-west-1", database: "alone" },
      ],
      [
        "instance-delete",
        "instance aws-eu-west-1 of database alone deleted: location aws-eu-west-1 removed from group solo",
        { group: "solo", location: "aws-eu-west-1", database: "alone" },
      ],
    ]);
  });
});
