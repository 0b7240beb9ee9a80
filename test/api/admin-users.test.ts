import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createDatabase, createGroup, createTeam, createUser } from "../helpers/factories.js";
import { instanceFile } from "../helpers/files.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let admin: ReturnType<typeof client>;

beforeAll(async () => {
  h = await startTestShoal();
  admin = client(h.url, h.adminToken);
});
afterAll(() => h.close());

describe("instance administration of users", () => {
  it("creates a user with a personal organization and a working first token", async () => {
    const r = await admin.post("/v1/admin/users", { username: "bob", email: "bob@example.com" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.user).toEqual({
      username: "bob",
      email: "bob@example.com",
      admin: false,
      created_at: expect.any(String),
    });
    const bob = client(h.url, r.body.token);
    expect((await bob.get("/v1/organizations")).body).toEqual([
      expect.objectContaining({ slug: "bob", name: "personal" }),
    ]);
    expect((await bob.get("/v1/admin/users")).status).toBe(403);
  });

  it("lists users, the administrator first created on start among them", async () => {
    const r = await admin.get("/v1/admin/users");
    expect(r.body.users.map((u: { username: string }) => u.username)).toEqual(
      expect.arrayContaining(["admin", "bob"]),
    );
    expect(r.body.users.find((u: { username: string }) => u.username === "admin").admin).toBe(true);
  });

  it("refuses duplicate or invalid usernames and bad emails", async () => {
    expect((await admin.post("/v1/admin/users", { username: "bob", email: "b@x.io" })).status).toBe(409);
    for (const username of ["Bob", "-bob", "bo b", "a".repeat(41)]) {
      expect((await admin.post("/v1/admin/users", { username, email: "b@x.io" })).status, username).toBe(400);
    }
    expect((await admin.post("/v1/admin/users", { username: "carl", email: "no-at-sign" })).status).toBe(400);
  });

  it("deletes a user with their tokens and personal databases", async () => {
    const u = await createUser(h);
    await createGroup(u, u.username, "default");
    const d = await createDatabase(u, u.username, "mine");
    const r = await admin.delete(`/v1/admin/users/${u.username}`);
    expect(r).toMatchObject({ status: 200, body: { user: u.username } });
    expect((await u.api.get("/v1/organizations")).status).toBe(401);
    expect(existsSync(instanceFile(h.dataDir, "aws-us-east-1", d.DbId))).toBe(false);
    expect((await admin.delete(`/v1/admin/users/${u.username}`)).status).toBe(404);
  });

  it("refuses to delete the only owner of a team organization", async () => {
    const u = await createUser(h);
    const team = await createTeam(u);
    const r = await admin.delete(`/v1/admin/users/${u.username}`);
    expect(r.status).toBe(409);
    expect(r.body.error).toContain(team);
    const co = await createUser(h);
    await addMember(u, team, co.username, "admin");
    expect((await admin.delete(`/v1/admin/users/${u.username}`)).status).toBe(409);
  });

  it("refuses to delete the last administrator", async () => {
    const r = await admin.delete("/v1/admin/users/admin");
    expect(r.status).toBe(400);
  });

  it("pages through users with limit and cursor, by username", async () => {
    for (let i = 0; i < 3; i++) await createUser(h);
    const all = await admin.get("/v1/admin/users");
    expect(all.body.pagination).toEqual({ next: null });
    const names = all.body.users.map((u: { username: string }) => u.username);
    expect(names).toEqual([...names].sort());
    const seen: string[] = [];
    let next: string | null = null;
    do {
      const r = await admin.get(`/v1/admin/users?limit=2${next ? `&cursor=${next}` : ""}`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.users.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.users.map((u: { username: string }) => u.username));
      next = r.body.pagination.next;
    } while (next);
    expect(seen).toEqual(names);
    expect((await admin.get("/v1/admin/users?limit=-1")).status).toBe(400);
    expect((await admin.get("/v1/admin/users?cursor=%%%")).status).toBe(400);
  });

  it("never deletes both owners of a team when one is deleted while the other leaves", async () => {
    const a = await createUser(h);
    const b = await createUser(h);
    const team = await createTeam(a);
    await addMember(a, team, b.username, "admin");
    expect(
      (await a.api.patch(`/v1/organizations/${team}/members/${b.username}`, { role: "owner" })).status,
    ).toBe(200);
    const [deleted, left] = await Promise.all([
      admin.delete(`/v1/admin/users/${a.username}`),
      b.api.delete(`/v1/organizations/${team}/members/${b.username}`),
    ]);
    expect([deleted.status, left.status].filter((s) => s === 200)).toHaveLength(1);
    const survivor = deleted.status === 200 ? b : a;
    const members = (await survivor.api.get(`/v1/organizations/${team}/members`)).body.members;
    expect(members).toEqual([expect.objectContaining({ username: survivor.username, role: "owner" })]);
  });
});

describe("the last instance administrator", () => {
  it("stays when two administrators delete each other at once", async () => {
    const own = await startTestShoal();
    try {
      const root = client(own.url, own.adminToken);
      const made = await root.post("/v1/admin/users", {
        username: "second",
        email: "s@example.com",
        admin: true,
      });
      expect(made.status, made.text).toBe(200);
      const second = client(own.url, made.body.token);
      const results = await Promise.all([
        root.delete("/v1/admin/users/second"),
        second.delete("/v1/admin/users/admin"),
      ]);
      // The second is refused: the last administrator stays (400), or its caller is gone already (401).
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      expect(results.find((r) => r.status !== 200)?.status).toBeOneOf([400, 401]);
      const survivor = results[0]!.status === 200 ? root : second;
      const admins = (await survivor.get("/v1/admin/users")).body.users.filter(
        (u: { admin: boolean }) => u.admin,
      );
      expect(admins).toHaveLength(1);
    } finally {
      await own.close();
    }
  });
});
