import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGroup, createTeam, createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;
let org: string;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  org = await createTeam(u);
  await createGroup(u, org, "default");
});
afterAll(() => h.close());

const create = (name: string, key?: string) =>
  u.api.post(
    `/v1/organizations/${org}/databases`,
    { name, group: "default" },
    {
      headers: key ? { "idempotency-key": key } : {},
    },
  );

describe("Idempotency-Key on creates", () => {
  it("answers a retried create with the first answer instead of a conflict", async () => {
    const first = await create("retried", "key-1");
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await create("retried", "key-1");
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    // Without the key, the same create is the usual conflict.
    expect((await create("retried")).status).toBe(409);
    const list = await u.api.get(`/v1/organizations/${org}/databases`);
    expect(list.body.databases.filter((d: { Name: string }) => d.Name === "retried")).toHaveLength(1);
  });

  it("refuses a key reused for a different request with 422, changing nothing", async () => {
    expect((await create("first-of-key", "key-2")).status).toBe(200);
    const r = await create("second-of-key", "key-2");
    expect(r.status).toBe(422);
    expect(r.body.code).toBe("idempotency_key_reused");
    expect((await u.api.get(`/v1/organizations/${org}/databases/second-of-key`)).status).toBe(404);
  });

  it("lets a failed create's key run again once the request is fixed", async () => {
    const bad = await u.api.post(
      `/v1/organizations/${org}/databases`,
      { name: "after-fix", group: "missing" },
      { headers: { "idempotency-key": "key-3" } },
    );
    expect(bad.status).toBe(400);
    expect((await create("after-fix", "key-3")).status).toBe(200);
  });

  it("gives exactly one create to concurrent requests with one key", async () => {
    const answers = await Promise.all([1, 2, 3, 4].map(() => create("raced", "key-4")));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of answers) expect([200, 409]).toContain(a.status);
    for (const a of ok) expect(a.body).toEqual(ok[0]!.body);
    const list = await u.api.get(`/v1/organizations/${org}/databases`);
    expect(list.body.databases.filter((d: { Name: string }) => d.Name === "raced")).toHaveLength(1);
  });

  it("keeps keys per user and rejects malformed ones", async () => {
    const other = await createUser(h);
    const r = await other.api.post(
      `/v1/organizations/${other.username}/groups`,
      { name: "default", location: "aws-us-east-1" },
      { headers: { "idempotency-key": "key-1" } },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("idempotent-replayed")).toBeNull();
    expect((await create("bad-key", "has space")).status).toBe(400);
  });
});
