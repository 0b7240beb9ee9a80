import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createTeam, createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let owner: TestUser;
let admin: TestUser;
let org: string;
const logs = (q: string) => owner.api.get(`/v1/organizations/${org}/audit-logs?${q}`);

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  admin = await createUser(h);
  org = await createTeam(owner);
  await addMember(owner, org, admin.username, "admin");
  for (const name of ["a", "b", "c"]) {
    const r = await admin.api.post(`/v1/organizations/${org}/groups`, { name, location: "aws-us-east-1" });
    expect(r.status, r.text).toBe(200);
  }
  expect((await owner.api.patch(`/v1/organizations/${org}`, { overages: true })).status).toBe(200);
});
afterAll(() => h.close());

describe("audit log filters", () => {
  it("narrows the log to one code, with totals and pages counted on what matches", async () => {
    const r = await logs("code=group-create&page_size=2");
    expect(r.status, r.text).toBe(200);
    expect(r.body.audit_logs.map((e: { data: { group: string } }) => e.data.group)).toEqual(["c", "b"]);
    expect(r.body.pagination).toMatchObject({ total_rows: 3, total_pages: 2 });
    const next = await logs(`code=group-create&page_size=2&cursor=${r.body.pagination.next}`);
    expect(next.body.audit_logs.map((e: { data: { group: string } }) => e.data.group)).toEqual(["a"]);
    expect(next.body.pagination.next).toBeNull();
  });

  it("narrows the log to one author, and to both at once", async () => {
    const byOwner = await logs(`author=${owner.username}`);
    expect(byOwner.body.audit_logs.every((e: { author: string }) => e.author === owner.username)).toBe(true);
    expect(byOwner.body.audit_logs.map((e: { code: string }) => e.code)).toContain("org-set-overages");
    const both = await logs(`author=${admin.username}&code=org-set-overages`);
    expect(both.body.audit_logs).toEqual([]);
    expect(both.body.pagination.total_rows).toBe(0);
  });

  it("still refuses members who aren't owners or admins", async () => {
    const member = await createUser(h);
    await addMember(owner, org, member.username, "member");
    const r = await member.api.get(`/v1/organizations/${org}/audit-logs?code=group-create`);
    expect(r.status).toBe(403);
  });
});
