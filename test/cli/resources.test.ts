import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliHarness } from "../helpers/cli.js";

let h: CliHarness;

beforeAll(async () => {
  h = await CliHarness.start();
});
afterAll(() => h?.close());

/** The rows of a table as printed: the header's cells, then each row's, split on runs of spaces. */
function table(text: string): string[][] {
  return text
    .trimEnd()
    .split("\n")
    .map((l) => l.trim().split(/\s{2,}/));
}

describe("databases", () => {
  it("creates the default group on a first create, then lists, shows and deletes databases", async () => {
    const created = await h.ok(["db", "create", "first"]);
    expect(created).toContain("Created group default in aws-us-east-1.");
    expect(created).toContain(`URL: ${h.url}/db/admin/first/`);
    const second = await h.json(["db", "create", "second", "--group", "default"]);
    expect(second).toMatchObject({ Name: "second", group: "default", http_url: `${h.url}/db/admin/second/` });

    const list = await h.json<any[]>(["db", "list"]);
    expect(list.map((d) => d.Name)).toEqual(["first", "second"]);
    expect(list[0]).toMatchObject({ Hostname: "first-admin.shoal.test", regions: ["aws-us-east-1"] });
    expect(table(await h.ok(["db", "list"]))).toEqual([
      ["NAME", "GROUP", "LOCATIONS", "URL"],
      ["first", "default", "aws-us-east-1", `${h.url}/db/admin/first/`],
      ["second", "default", "aws-us-east-1", `${h.url}/db/admin/second/`],
    ]);

    expect(await h.ok(["db", "show", "first", "--url"])).toBe(`${h.url}/db/admin/first/\n`);
    expect(await h.json(["db", "show", "first", "--url"])).toEqual({ url: `${h.url}/db/admin/first/` });
    expect(await h.ok(["db", "show", "first", "--hostname"])).toBe("first-admin.shoal.test\n");
    const shown = table(await h.ok(["db", "show", "first"]));
    expect(shown[0]).toEqual(["FIELD", "VALUE"]);
    expect(shown).toContainEqual(["url", `${h.url}/db/admin/first/`]);
    expect((await h.json(["db", "show", "first"])).DbId).toBe(list[0].DbId);

    expect(await h.fails(["db", "destroy", "second"])).toContain("add --yes to confirm");
    expect(await h.ok(["db", "destroy", "second", "--yes"])).toBe("Deleted database second.\n");
    expect((await h.json<any[]>(["db", "list"])).map((d) => d.Name)).toEqual(["first"]);
  });

  it("copies a database with --from-db and filters the list by group", async () => {
    await h.ok(["group", "create", "other", "--location", "aws-eu-west-1"]);
    await h.ok(["db", "create", "elsewhere", "--group", "other", "--from-db", "first"]);
    expect((await h.json<any[]>(["db", "list", "--group", "other"])).map((d) => d.Name)).toEqual([
      "elsewhere",
    ]);
  });

  it("mints database tokens that work on the URL it shows, read-only on request", async () => {
    const url = (await h.ok(["db", "show", "first", "--url"])).trim();
    const token = (await h.ok(["db", "tokens", "create", "first"])).trim();
    const { jwt: readOnly } = await h.json([
      "db",
      "tokens",
      "create",
      "first",
      "--read-only",
      "--expiration",
      "1h",
    ]);
    const run = (t: string, sql: string) =>
      fetch(`${url}v2/pipeline`, {
        method: "POST",
        headers: { authorization: `Bearer ${t}` },
        body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql } }] }),
      }).then((r) => r.json() as Promise<any>);
    expect((await run(token, "CREATE TABLE t (v)")).results[0].type).toBe("ok");
    const refused = await run(readOnly, "INSERT INTO t VALUES (1)");
    expect(refused.results[0].error.code).toBe("FORBIDDEN");
    const err = await h.fails(["db", "tokens", "create", "first", "--expiration", "soon"]);
    expect(err).toContain("Invalid expiration format");
  });

  it("mints database and group tokens limited to tables with -p, as the turso CLI does", async () => {
    const url = (await h.ok(["db", "show", "first", "--url"])).trim();
    const owner = (await h.ok(["db", "tokens", "create", "first"])).trim();
    const run = (t: string, sql: string) =>
      fetch(`${url}v2/pipeline`, {
        method: "POST",
        headers: { authorization: `Bearer ${t}` },
        body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql } }] }),
      }).then((r) => r.json() as Promise<any>);
    await run(owner, "CREATE TABLE IF NOT EXISTS comments (v)");
    const limited = (
      await h.ok(["db", "tokens", "create", "first", "-p", "all:data_read", "-p", "comments:data_add"])
    ).trim();
    expect((await run(limited, "INSERT INTO comments VALUES ('hi')")).results[0].type).toBe("ok");
    const refused = await run(limited, "DELETE FROM comments");
    expect(refused.results[0].error.message).toMatch(/data_delete on table comments/);
    const { jwt: group } = await h.json(["group", "tokens", "create", "default", "-p", "comments:data_read"]);
    expect((await run(group, "SELECT count(*) FROM comments")).results[0].type).toBe("ok");
    expect((await run(group, "INSERT INTO comments VALUES ('no')")).results[0].error.code).toBe("FORBIDDEN");
    expect(await h.fails(["db", "tokens", "create", "first", "-p", "comments"])).toContain(
      "invalid permission",
    );
    expect(await h.fails(["db", "tokens", "create", "first", "-p", "t:data_insert"])).toContain(
      'unknown action "data_insert"',
    );
  });

  it("lists deleted databases and restores one with its rows; turns recovery off and on", async () => {
    await h.ok(["db", "create", "undo-me"]);
    await h.ok(["db", "shell", "undo-me", "CREATE TABLE t (v); INSERT INTO t VALUES (1), (2)"]);
    await h.ok(["db", "destroy", "undo-me", "--yes"]);
    const listed = table(await h.ok(["db", "list", "--deleted"]));
    expect(listed[0]).toEqual(["NAME", "ID", "GROUP", "DELETED AT", "WITH ITS GROUP"]);
    expect(listed.map((row) => row[0])).toContain("undo-me");
    expect((await h.json<any[]>(["db", "list", "--deleted"])).map((d) => d.Name)).toContain("undo-me");
    expect(await h.ok(["db", "restore", "undo-me", "--name", "undone"])).toBe("Restored database undone.\n");
    expect(await h.ok(["db", "shell", "undone", "SELECT count(*) AS n FROM t"])).toContain("2");
    expect(await h.fails(["db", "restore", "never-deleted"])).toContain("shoal db list --deleted");
    expect(await h.ok(["org", "recovery"])).toContain("is on");
    expect(await h.ok(["org", "recovery", "off"])).toContain("is off");
    expect(await h.json(["org", "recovery", "on"])).toEqual({ restore_enabled: true });
  });

  it("names an unknown database and says where to look, with exit code 1", async () => {
    for (const args of [
      ["db", "show", "nope"],
      ["db", "destroy", "nope", "--yes"],
      ["db", "shell", "nope", "SELECT 1"],
    ]) {
      const err = await h.fails(args);
      expect(err).toContain("could not find database with name nope");
      expect(err).toContain("shoal db list");
    }
  });
});

describe("groups", () => {
  it("lists, creates, changes the locations of and destroys groups", async () => {
    const made = await h.json(["group", "create", "grp", "--location", "aws-us-west-2"]);
    expect(made).toMatchObject({ name: "grp", primary: "aws-us-west-2", locations: ["aws-us-west-2"] });
    const added = await h.ok(["group", "locations", "add", "grp", "aws-eu-west-1", "aws-ap-south-1"]);
    expect(added).toContain("Added aws-eu-west-1, aws-ap-south-1");
    const listed = await h.json<any[]>(["group", "list"]);
    expect(listed.find((g) => g.name === "grp").locations.sort()).toEqual([
      "aws-ap-south-1",
      "aws-eu-west-1",
      "aws-us-west-2",
    ]);
    const removed = await h.json(["group", "locations", "remove", "grp", "aws-ap-south-1"]);
    expect(removed.locations.sort()).toEqual(["aws-eu-west-1", "aws-us-west-2"]);
    expect(table(await h.ok(["group", "list"]))).toContainEqual([
      "grp",
      "aws-us-west-2",
      expect.stringMatching(/aws-us-west-2/),
      "active",
    ]);
    const primary = await h.fails(["group", "locations", "remove", "grp", "aws-us-west-2"]);
    expect(primary).toContain("cannot remove primary location");
    expect(await h.fails(["group", "create", "bad", "--location", "mars"])).toContain("invalid location");
    expect(await h.json(["group", "destroy", "grp", "--yes"])).toMatchObject({ name: "grp" });
    expect(await h.fails(["group", "destroy", "grp", "--yes"])).toContain("shoal group list");
  });
});

describe("organizations and members", () => {
  it("creates, lists and switches organizations, and manages members", async () => {
    await h.ok(["admin", "users", "create", "carol", "--email", "carol@example.com"]);
    const org = await h.json(["org", "create", "Team Blue"]);
    expect(org).toMatchObject({ name: "Team Blue", slug: "team-blue", type: "team" });
    expect(table(await h.ok(["org", "list"]))).toEqual([
      ["SLUG", "NAME", "TYPE"],
      ["*", "admin", "personal", "personal"],
      ["team-blue", "Team Blue", "team"],
    ]);
    expect(await h.ok(["org", "switch", "team-blue"])).toBe("Now using organization team-blue.\n");
    expect((await h.json(["whoami"])).org).toBe("team-blue");
    expect((await h.json<any[]>(["org", "list"])).map((o) => o.slug)).toEqual(["admin", "team-blue"]);

    expect(await h.json(["org", "members", "add", "carol", "--role", "viewer"])).toEqual({
      member: "carol",
      role: "viewer",
    });
    await h.ok(["org", "members", "role", "carol", "admin"]);
    const members = await h.json<any[]>(["org", "members", "list"]);
    expect(members.map((m) => [m.username, m.role])).toEqual([
      ["admin", "owner"],
      ["carol", "admin"],
    ]);
    expect(table(await h.ok(["org", "members", "list"]))[0]).toEqual(["USERNAME", "ROLE", "EMAIL"]);
    expect(await h.ok(["org", "members", "remove", "carol", "--yes"])).toContain("Removed carol");
    // --org acts on another organization for one command.
    expect(
      (await h.json<any[]>(["org", "members", "list", "--org", "admin"])).map((m) => m.username),
    ).toEqual(["admin"]);
    const unknown = await h.fails(["org", "switch", "nobody-here"]);
    expect(unknown).toContain("organization not found");
    expect(unknown).toContain("see your organizations with `shoal org list`");
    await h.ok(["org", "switch", "admin"]);
  });
});

describe("API tokens", () => {
  it("creates a token shown once, lists it, and revokes it so it is refused", async () => {
    const made = await h.json(["tokens", "create", "ci"]);
    expect(made).toMatchObject({ name: "ci", token: expect.any(String) });
    const human = await h.ok(["tokens", "create", "ci-2"]);
    expect(human).toMatch(/Created API token ci-2\. Keep it now: it is not shown again\.\n\n {2}\S+\n/);
    const list = await h.json<any[]>(["tokens", "list"]);
    expect(list.map((t) => t.name)).toEqual(expect.arrayContaining(["ci", "ci-2"]));
    expect(table(await h.ok(["tokens", "list"]))[0]).toEqual(["NAME", "ID", "CREATED"]);
    expect((await h.json(["whoami"], { env: { SHOAL_TOKEN: made.token } })).username).toBe("admin");
    expect(await h.json(["tokens", "revoke", "ci", "--yes"])).toEqual({ token: "ci" });
    const refused = await h.fails(["whoami"], { env: { SHOAL_TOKEN: made.token } });
    expect(refused).toContain("HTTP 401");
  });
});

describe("instance administration", () => {
  it("lists, creates and deletes users; the new user logs in with the token shown", async () => {
    const made = await h.json(["admin", "users", "create", "dave", "--email", "dave@example.com"]);
    expect(made.user).toMatchObject({ username: "dave", email: "dave@example.com", admin: false });
    const users = await h.json<any[]>(["admin", "users", "list"]);
    expect(users.map((u) => u.username)).toEqual(expect.arrayContaining(["admin", "dave"]));
    expect(table(await h.ok(["admin", "users", "list"]))[0]).toEqual([
      "USERNAME",
      "EMAIL",
      "ADMIN",
      "CREATED",
    ]);
    const asDave = { SHOAL_TOKEN: made.token };
    expect((await h.json(["whoami"], { env: asDave })).org).toBe("dave");
    expect(await h.fails(["admin", "users", "list"], { env: asDave })).toContain(
      "only the instance administrator may do this",
    );
    expect(await h.ok(["admin", "users", "delete", "dave", "--yes"])).toBe("Deleted user dave.\n");
    expect(await h.fails(["admin", "users", "delete", "dave", "--yes"])).toContain("shoal admin users list");
    expect(await h.fails(["admin", "users", "create", "erin"])).toContain(
      "required option '--email <email>'",
    );
  });

  it("lists the nodes", async () => {
    const nodes = await h.json<any[]>(["admin", "nodes"]);
    expect(nodes).toHaveLength(1);
    expect(nodes[0]).toMatchObject({ url: h.url, live: true });
    const t = table(await h.ok(["admin", "nodes"]));
    expect(t[0]).toEqual(["ID", "URL", "VERSION", "LIVE", "HEARTBEAT", "LOCATIONS"]);
    expect(t[1]![1]).toBe(h.url);
  });

  it("shows the node's shards and replicas", async () => {
    const status = await h.json<any>(["admin", "node"]);
    expect(status.shards.length).toBeGreaterThan(0);
    expect(status.shards.every((s: { serving: boolean }) => s.serving)).toBe(true);
    const text = await h.ok(["admin", "node"]);
    expect(text).toMatch(new RegExp(`^Node ${status.node}: (\\d+) of \\1 shard processes serving\\.\n`));
  });
});

describe("choosing a new database's group", () => {
  it("uses an organization's only group, refuses a location or group it lacks, and says what an empty list means", async () => {
    await h.ok(["org", "create", "Solo Shop"]);
    const solo = ["--org", "solo-shop"];
    // An empty organization: a hint instead of a bare header, and JSON stays a list.
    expect(await h.ok(["db", "list", ...solo])).toBe(
      "No databases yet. Create one with `shoal db create <name>`.\n",
    );
    expect(await h.json(["db", "list", ...solo])).toEqual([]);
    await h.ok(["group", "create", "eu", "--location", "aws-eu-west-1", ...solo]);

    // One group, not named default: it is the one used, as turso does.
    expect(await h.json(["db", "create", "orders", ...solo])).toMatchObject({ Name: "orders", group: "eu" });
    // A location the group doesn't have is refused, not ignored; one it has is fine.
    const mars = await h.fails(["db", "create", "stock", "--location", "mars", ...solo]);
    expect(mars).toContain("group eu has no location mars (it has aws-eu-west-1)");
    expect(mars).toContain("shoal group locations add eu mars");
    expect(await h.json(["db", "create", "stock", "--location", "aws-eu-west-1", ...solo])).toMatchObject({
      group: "eu",
    });
    // A group that doesn't exist is named, for a create and for a list.
    expect(await h.fails(["db", "create", "lost", "--group", "nosuch", ...solo])).toContain(
      "the organization has no group named nosuch",
    );
    expect(await h.fails(["db", "list", "--group", "nosuch", ...solo])).toContain("shoal group list");
    expect((await h.json<any[]>(["db", "list", ...solo])).map((d) => d.Name)).toEqual(["orders", "stock"]);

    // Two groups and none named default: the choice is the user's.
    await h.ok(["group", "create", "us", "--location", "aws-us-east-1", ...solo]);
    expect(await h.fails(["db", "create", "ambiguous", ...solo])).toContain(
      "choose one with --group (eu, us)",
    );
    expect(await h.ok(["db", "list", "--group", "us", ...solo])).toBe(
      "Group us has no databases. Create one with `shoal db create <name> --group us`.\n",
    );
  });
});
