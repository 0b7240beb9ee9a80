import { createClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, type TestUser, uniqueName } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let user: TestUser;
let turso: ReturnType<typeof createClient>;

beforeAll(async () => {
  h = await startTestShoal();
  user = await createUser(h);
  turso = createClient({ org: user.username, token: user.token, baseUrl: h.apiBase });
});
afterAll(() => h.close());

describe("the three core operations through @tursodatabase/api", () => {
  it("creates a group, a database in it, adds a location and updates overages", async () => {
    const group = await turso.groups.create("default", "aws-us-east-1");
    expect(group).toMatchObject({ name: "default", primary: "aws-us-east-1", locations: ["aws-us-east-1"] });
    expect((group as unknown as { uuid: string }).uuid).toMatch(/^[0-9a-f-]{36}$/);

    const db = await turso.databases.create("my-db", { group: "default" });
    expect(db).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      hostname: `my-db-${user.username}.shoal.test`,
      name: "my-db",
    });

    const grown = await turso.groups.addLocation("default", "aws-eu-west-1");
    expect(grown.locations).toEqual(["aws-us-east-1", "aws-eu-west-1"]);

    const org = await turso.organizations.update({ overages: true });
    expect(org).toEqual({
      name: "personal",
      slug: user.username,
      type: "personal",
      overages: true,
      blocked_reads: false,
      blocked_writes: false,
      require_mfa: false,
      plan_id: "self-hosted",
      plan_timeline: "",
      platform: "",
    });

    const fetched = await turso.databases.get("my-db");
    expect(fetched).toMatchObject({
      name: "my-db",
      id: db.id,
      hostname: db.hostname,
      regions: ["aws-us-east-1", "aws-eu-west-1"],
      primaryRegion: "aws-us-east-1",
      group: "default",
      type: "logical",
      block_reads: false,
      block_writes: false,
      sleeping: false,
      archived: false,
      is_schema: false,
    });
  });

  it("lists groups, databases and locations in the client's shapes", async () => {
    const name = uniqueName("listed");
    await turso.databases.create(name, { group: "default" });
    const dbs = await turso.databases.list();
    expect(dbs.map((d) => d.name)).toContain(name);
    const groups = await turso.groups.list();
    expect(groups.map((g) => g.name)).toEqual(["default"]);
    const locations = await turso.locations.list();
    expect(locations).toContainEqual({ code: "aws-us-east-1", description: expect.any(String) });
    expect(locations).toHaveLength(6);
  });

  it("surfaces Turso's error strings through the client", async () => {
    await expect(turso.databases.create("x-db", { group: "nope" })).rejects.toMatchObject({
      name: "TursoClientError",
      message: "group not found",
      status: 400,
    });
    await turso.databases.create("dup", { group: "default" });
    const err = await turso.databases.create("dup", { group: "default" }).catch((e: unknown) => e);
    expect((err as Error).name).toBe("TursoClientError");
    expect(err).toMatchObject({ status: 409, message: "database with name dup already exists" });
    await expect(turso.groups.addLocation("default", "amss")).rejects.toMatchObject({
      status: 400,
      message: "invalid location: amss",
    });
    await expect(turso.groups.addLocation("nope", "aws-eu-west-1")).rejects.toMatchObject({
      status: 404,
      message: "group not found",
    });
  });

  it("manages API tokens and validates the caller's token", async () => {
    const t = await turso.apiTokens.create("ci-token");
    expect(t).toEqual({
      name: "ci-token",
      id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      token: expect.any(String),
    });
    expect((await turso.apiTokens.list()).map((x) => x.name)).toContain("ci-token");
    const other = createClient({ org: user.username, token: t.token, baseUrl: h.apiBase });
    expect((await other.groups.list()).length).toBe(1);
    expect(await turso.apiTokens.validate(t.token)).toEqual({ valid: false, expiry: -1 });
    expect(await turso.apiTokens.revoke("ci-token")).toEqual({ token: "ci-token" });
    await expect(other.groups.list()).rejects.toMatchObject({ status: 401 });
  });

  it("deletes a database and a group", async () => {
    await turso.groups.create("scratch", "aws-us-west-2");
    await turso.databases.create("scratch-db", { group: "scratch" });
    expect(await turso.databases.delete("scratch-db")).toEqual({ database: "scratch-db" });
    await expect(turso.databases.get("scratch-db")).rejects.toMatchObject({ status: 404 });
    expect((await turso.groups.delete("scratch")).name).toBe("scratch");
    await expect(turso.groups.get("scratch")).rejects.toMatchObject({
      status: 404,
      message: "group not found",
    });
  });
});
