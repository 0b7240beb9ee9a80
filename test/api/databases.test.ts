import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, createGroup, createUser, type TestUser } from "../helpers/factories.js";
import { instanceFile, isValidDatabase } from "../helpers/files.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;
const dbs = () => `/v1/organizations/${u.username}/databases`;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  await createGroup(u, u.username, "default", "aws-us-east-1");
  await u.api.post(`/v1/organizations/${u.username}/groups/default/locations/aws-eu-west-1`);
  await createGroup(u, u.username, "solo", "aws-us-west-2");
});
afterAll(() => h.close());

describe("core operation 1: creating a database", () => {
  it("answers exactly {database: {DbId, Hostname, Name}}", async () => {
    const r = await u.api.post(dbs(), { name: "exact", group: "default" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      database: {
        DbId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        Hostname: `exact-${u.username}.shoal.test`,
        Name: "exact",
      },
    });
    // The turso CLI labels ids with 0x10 in byte 5 as "Turso" databases.
    expect(r.body.database.DbId.slice(10, 12)).not.toBe("10");
  });

  it("creates a valid libSQL database file in every location of the group", async () => {
    const d = await createDatabase(u, u.username, "real-files", "default");
    for (const l of ["aws-us-east-1", "aws-eu-west-1"]) {
      expect(isValidDatabase(instanceFile(h.dataDir, l, d.DbId)), l).toBe(true);
    }
  });

  it("places a database only in its own group's locations", async () => {
    const d = await createDatabase(u, u.username, "solo-db", "solo");
    expect(existsSync(instanceFile(h.dataDir, "aws-us-west-2", d.DbId))).toBe(true);
    expect(existsSync(instanceFile(h.dataDir, "aws-us-east-1", d.DbId))).toBe(false);
  });

  it("accepts a 64-character name when the hostname label fits, and size limits with units", async () => {
    const name = "n".repeat(Math.min(64, 63 - 1 - u.username.length));
    expect((await u.api.post(dbs(), { name, group: "default" })).status).toBe(200);
    const sized = await u.api.post(dbs(), { name: "sized", group: "default", size_limit: "256MB" });
    expect(sized.status, sized.text).toBe(200);
  });

  it("lets the same name exist in two organizations", async () => {
    const other = await createUser(h);
    await createGroup(other, other.username, "default");
    await createDatabase(other, other.username, "exact");
    const mine = await u.api.get(`${dbs()}/exact`);
    expect(mine.body.database.Hostname).toBe(`exact-${u.username}.shoal.test`);
  });
});

describe("reading and deleting databases", () => {
  it("lists databases, filtered by group on request", async () => {
    const all = await u.api.get(dbs());
    expect(all.body.databases.map((d: { Name: string }) => d.Name)).toEqual(
      expect.arrayContaining(["exact", "real-files", "solo-db"]),
    );
    const solo = await u.api.get(`${dbs()}?group=solo`);
    expect(solo.body.databases.map((d: { Name: string }) => d.Name)).toEqual(["solo-db"]);
    const none = await u.api.get(`${dbs()}?group=missing`);
    expect(none.body.databases).toEqual([]);
  });

  it("searches names by a part of them, without regard to case, page by page", async () => {
    for (const n of ["find-alpha", "find-beta", "find-gamma", "other-find"])
      await createDatabase(u, u.username, n);
    const names = (r: { body: { databases: Array<{ Name: string }> } }) =>
      r.body.databases.map((d) => d.Name);
    expect(names(await u.api.get(`${dbs()}?search=FIND`))).toEqual([
      "find-alpha",
      "find-beta",
      "find-gamma",
      "other-find",
    ]);
    const first = await u.api.get(`${dbs()}?search=find-&limit=2`);
    expect(names(first)).toEqual(["find-alpha", "find-beta"]);
    const second = await u.api.get(`${dbs()}?search=find-&limit=2&cursor=${first.body.pagination.next}`);
    expect(names(second)).toEqual(["find-gamma"]);
    expect(second.body.pagination.next).toBeNull();
    // Text no name can hold (and SQL wildcards) matches nothing, rather than everything.
    for (const text of ["%", "_", "find%25", "no such"]) {
      const r = await u.api.get(`${dbs()}?search=${encodeURIComponent(text)}`);
      expect(r.status).toBe(200);
      expect(r.body.databases).toEqual([]);
    }
  });

  it("deletes a database and the files of all its instances", async () => {
    const d = await createDatabase(u, u.username, "short-lived", "default");
    const files = ["aws-us-east-1", "aws-eu-west-1"].map((l) => instanceFile(h.dataDir, l, d.DbId));
    expect(files.every(existsSync)).toBe(true);
    const r = await u.api.delete(`${dbs()}/short-lived`);
    expect(r).toMatchObject({ status: 200, body: { database: "short-lived" } });
    expect(files.some(existsSync)).toBe(false);
    expect((await u.api.get(`${dbs()}/short-lived`)).status).toBe(404);
    // The name is free again.
    expect((await u.api.post(dbs(), { name: "short-lived", group: "default" })).status).toBe(200);
  });
});
