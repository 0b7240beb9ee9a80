import { createClient as createSqlClient } from "@libsql/client";
import { createClient, type TursoClientError } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

/**
 * Every method of the official TypeScript client, @tursodatabase/api 2.0.5, against a real Shoal,
 * in the order a user would call them, each result checked. The one method Shoal can't serve is
 * `locations.closest()`, which ignores the base URL and asks https://region.turso.io (see below).
 */
let h: TestShoal;
let owner: TestUser;
let bob: TestUser;
let team: string;
let turso: ReturnType<typeof createClient>;

const client = (token: string, org: string) => createClient({ org, token, baseUrl: h.apiBase });

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  bob = await createUser(h);
  const r = await owner.api.post("/v1/organizations", { name: `Client ${owner.username}` });
  team = r.body.organization.slug;
  turso = client(owner.token, team);
});
afterAll(() => h.close());

describe("@tursodatabase/api against Shoal", () => {
  it("apiTokens: create, list, validate, revoke", async () => {
    const t = await turso.apiTokens.create("sdk-token");
    expect(t).toEqual({ id: expect.any(String), name: "sdk-token", token: expect.any(String) });
    const list = await turso.apiTokens.list();
    expect(list.map((x) => x.name)).toContain("sdk-token");
    expect(list.find((x) => x.name === "sdk-token")?.id).toBe(t.id);
    // Shoal's tokens never expire (exp -1); this client version reads -1 as "not valid", as it
    // does against Turso itself, and it sends its own token whatever is passed in.
    expect(await turso.apiTokens.validate(t.token)).toEqual({ valid: false, expiry: -1 });
    expect(await turso.apiTokens.revoke("sdk-token")).toEqual({ token: "sdk-token" });
    expect((await turso.apiTokens.list()).map((x) => x.name)).not.toContain("sdk-token");
    await expect(client(t.token, team).groups.list()).rejects.toMatchObject({ status: 401 });
  });

  it("organizations: list, update (core operation 3), members, add and remove a member", async () => {
    const orgs = await turso.organizations.list();
    expect(orgs.map((o) => o.slug).sort()).toEqual([owner.username, team].sort());
    const mine = orgs.find((o) => o.slug === team);
    expect(mine).toMatchObject({
      type: "team",
      overages: false,
      blocked_reads: false,
      blocked_writes: false,
    });

    const updated = await turso.organizations.update({ overages: true });
    expect(updated).toMatchObject({ slug: team, overages: true });
    expect((await turso.organizations.update({ overages: false })).overages).toBe(false);

    expect(await turso.organizations.addMember(bob.username, "member")).toEqual({
      member: bob.username,
      role: "member",
    });
    const members = await turso.organizations.members();
    expect(members).toContainEqual({ username: bob.username, role: "member", email: expect.any(String) });
    expect(members.find((m) => m.username === owner.username)?.role).toBe("owner");
    expect(await turso.organizations.removeMember(bob.username)).toEqual({ member: bob.username });
    expect((await turso.organizations.members()).map((m) => m.username)).not.toContain(bob.username);
  });

  it("organizations: invite a user, list and delete invites", async () => {
    const invited = await turso.organizations.inviteUser("carol@example.com", "admin");
    expect(invited).toMatchObject({ email: "carol@example.com", role: "admin" });
    const invites = await turso.organizations.listInvites();
    expect(invites).toContainEqual(expect.objectContaining({ email: "carol@example.com", role: "admin" }));
    // It parses the answer as JSON and returns nothing: an empty body would make it throw.
    await expect(turso.organizations.deleteInvite("carol@example.com")).resolves.toBeUndefined();
    expect((await turso.organizations.listInvites()).map((i) => i.email)).not.toContain("carol@example.com");
  });

  it("organizations: invoices", async () => {
    const invoices = await turso.organizations.invoices();
    expect(Array.isArray(invoices)).toBe(true);
    for (const i of invoices) expect(i).toMatchObject({ invoice_number: expect.any(String) });
  });

  it("locations: list; closest() is answered by Turso's own region service, not the API", async () => {
    const locations = await turso.locations.list();
    expect(locations).toContainEqual({ code: "aws-us-east-1", description: "AWS US East (Virginia)" });
    expect(locations).toHaveLength(6);
    // closest() fetches https://region.turso.io/ whatever the base URL: prove where it goes
    // (without letting it out of the machine) rather than pretend Shoal answers it.
    const seen: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = (async (input: string | URL | Request) => {
      seen.push(String(input instanceof Request ? input.url : input));
      throw new TypeError("blocked in tests");
    }) as typeof fetch;
    try {
      await expect(turso.locations.closest()).rejects.toThrow("blocked in tests");
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(seen).toEqual(["https://region.turso.io/"]);
  });

  it("groups: create, list, get, add and remove a location, tokens, rotation, delete", async () => {
    const g = await turso.groups.create("default", "aws-us-east-1");
    expect(g).toMatchObject({ name: "default", primary: "aws-us-east-1", locations: ["aws-us-east-1"] });
    expect((await turso.groups.list()).map((x) => x.name)).toEqual(["default"]);
    expect(await turso.groups.get("default")).toMatchObject({ name: "default" });

    const added = await turso.groups.addLocation("default", "aws-eu-west-1");
    expect(added.locations).toEqual(["aws-us-east-1", "aws-eu-west-1"]);
    const removed = await turso.groups.removeLocation("default", "aws-eu-west-1");
    expect(removed.locations).toEqual(["aws-us-east-1"]);

    const { jwt } = await turso.groups.createToken("default", {
      expiration: "1h",
      authorization: "read-only",
    });
    expect(jwt.split(".")).toHaveLength(3);
    await expect(turso.groups.rotateTokens("default")).resolves.toEqual({});

    await turso.groups.create("scratch", "aws-us-west-2");
    expect(await turso.groups.delete("scratch")).toMatchObject({ name: "scratch" });
    await expect(turso.groups.get("scratch")).rejects.toMatchObject({
      status: 404,
      message: "group not found",
    });
  });

  it("databases: create (core operation 1), list, get, instances, tokens that run SQL, usage, update, delete", async () => {
    const created = await turso.databases.create("sdk-db", { group: "default" });
    expect(created).toEqual({
      id: expect.any(String),
      name: "sdk-db",
      hostname: `sdk-db-${team}.shoal.test`,
    });
    const listed = await turso.databases.list({ group: "default" });
    expect(listed.map((d) => d.name)).toEqual(["sdk-db"]);
    const db = await turso.databases.get("sdk-db");
    expect(db).toMatchObject({
      name: "sdk-db",
      id: created.id,
      hostname: created.hostname,
      group: "default",
      primaryRegion: "aws-us-east-1",
      regions: ["aws-us-east-1"],
      type: "logical",
      is_schema: false,
      block_reads: false,
      block_writes: false,
      sleeping: false,
    });

    const instances = await turso.databases.listInstances("sdk-db");
    expect(instances).toEqual([
      expect.objectContaining({ name: "aws-us-east-1", type: "primary", region: "aws-us-east-1" }),
    ]);
    expect(await turso.databases.getInstance("sdk-db", "aws-us-east-1")).toMatchObject({ type: "primary" });

    const { jwt } = await turso.databases.createToken("sdk-db", { authorization: "full-access" });
    // The URL as the README builds it from what this client returns (it has no http_url).
    const sql = createSqlClient({ url: `${h.url}/db/${team}/${created.name}/`, authToken: jwt });
    await sql.execute("CREATE TABLE t (x)");
    await sql.execute("INSERT INTO t VALUES (1), (2)");
    expect((await sql.execute("SELECT count(*) AS n FROM t")).rows[0]?.n).toBe(2);
    sql.close();

    const usage = await turso.databases.usage("sdk-db", {
      from: new Date(Date.now() - 3600_000),
      to: new Date(),
    });
    expect(usage).toMatchObject({ uuid: created.id });
    expect(
      (usage as unknown as { usage: { rows_written: number } }).usage.rows_written,
    ).toBeGreaterThanOrEqual(2);

    await expect(turso.databases.updateVersion("sdk-db")).resolves.toEqual({});
    await expect(turso.databases.rotateTokens("sdk-db")).resolves.toEqual({});
    const stale = createSqlClient({ url: `${h.url}/db/${team}/sdk-db/`, authToken: jwt });
    await expect(stale.execute("SELECT 1")).rejects.toThrow();
    stale.close();

    expect(await turso.databases.delete("sdk-db")).toEqual({ database: "sdk-db" });
    await expect(turso.databases.get("sdk-db")).rejects.toMatchObject({
      name: "TursoClientError",
      status: 404,
    });
  });

  it("databases: create from a seed and as a schema database, and list them by type", async () => {
    await turso.databases.create("source", { group: "default" });
    const branch = await turso.databases.create("branch", {
      group: "default",
      seed: { type: "database", name: "source" },
    });
    expect(branch.name).toBe("branch");
    await turso.databases.create("schema-parent", { group: "default", is_schema: true });
    await turso.databases.create("schema-child", { group: "default", schema: "schema-parent" });
    expect((await turso.databases.list({ type: "schema" })).map((d) => d.name)).toEqual(["schema-parent"]);
    expect((await turso.databases.list({ schema: "schema-parent" })).map((d) => d.name)).toEqual([
      "schema-child",
    ]);
  });

  it("errors come back as TursoClientError with Turso's message and status", async () => {
    const err = await turso.databases
      .create("bad name", { group: "default" })
      .then(() => undefined)
      .catch((e: unknown) => e);
    // The class is exported as a type only: recognise it by name.
    expect((err as Error).name).toBe("TursoClientError");
    expect((err as TursoClientError).status).toBe(400);
    await expect(turso.databases.create("x1", { group: "missing" })).rejects.toMatchObject({
      status: 400,
      message: "group not found",
    });
  });

  it("organizations: delete a team organization", async () => {
    const r = await owner.api.post("/v1/organizations", { name: `Doomed ${owner.username}` });
    const doomed = client(owner.token, r.body.organization.slug);
    await expect(doomed.organizations.delete()).resolves.toBeDefined();
    const slugs = (await turso.organizations.list()).map((o) => o.slug);
    expect(slugs).not.toContain(r.body.organization.slug);
  });
});
