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
});
