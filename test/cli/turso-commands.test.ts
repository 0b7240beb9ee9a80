import { writeFileSync } from "node:fs";
import path from "node:path";
import { createClient } from "@libsql/client";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_ADMIN_TOKEN, CliHarness } from "../helpers/cli.js";
import { client } from "../helpers/http.js";

/** Commands the turso CLI has, as `shoal` runs them against a real Shoal. */
let h: CliHarness;

beforeAll(async () => {
  h = await CliHarness.start();
  await h.ok(["db", "create", "shop"]);
});
afterAll(() => h?.close());

const api = () => client(h.url, CLI_ADMIN_TOKEN);

/** Runs `SELECT 1` with a token on a URL; answers the error's text, or "ok". */
async function select1(url: string, authToken: string): Promise<string> {
  const c = createClient({ url, authToken });
  try {
    await c.execute("SELECT 1");
    return "ok";
  } catch (e) {
    return String(e);
  } finally {
    c.close();
  }
}

describe("turso's commands in shoal", () => {
  it("db config shows a database's settings and changes the ones given", async () => {
    const shown = await h.ok(["db", "config", "shop"]);
    expect(shown).toContain("size limit");
    expect(shown).toMatch(/block writes\s+off/);
    expect(shown).toMatch(/allowed IPs\s+every address/);
    const changed = await h.json([
      "db",
      "config",
      "shop",
      "--block-writes",
      "on",
      "--size-limit",
      "64mb",
      "--allowed-ips",
      "127.0.0.1,::1",
    ]);
    expect(changed).toMatchObject({
      block_writes: true,
      block_reads: false,
      allowed_ips: ["127.0.0.1", "::1"],
    });
    // The server has it: a write is refused with BLOCKED, a read still answers.
    const jwt = (await h.ok(["db", "tokens", "create", "shop"])).trim();
    const url = (await h.ok(["db", "show", "shop", "--http-url"])).trim();
    const c = createClient({ url, authToken: jwt });
    await expect(c.execute("CREATE TABLE t (x)")).rejects.toThrow(/BLOCKED/);
    expect((await c.execute("SELECT 1 AS one")).rows[0]?.one).toBe(1);
    c.close();
    // Only what is given changes; `none` serves every address again.
    const back = await h.json(["db", "config", "shop", "--block-writes", "off", "--allowed-ips", "none"]);
    expect(back).toMatchObject({ block_writes: false, allowed_ips: [] });
    expect((await api().get("/v1/organizations/admin/databases/shop/configuration")).body.size_limit).toBe(
      "64mb",
    );
    expect(await h.fails(["db", "config", "shop", "--block-reads", "maybe"])).toContain(
      "maybe is neither on nor off",
    );
    expect(await h.fails(["db", "config", "nosuch"])).toContain("shoal db list");
  });

  it("db locations lists the codes groups and --location take", async () => {
    const locations = await h.json<Record<string, string>>(["db", "locations"]);
    expect(Object.keys(locations)).toContain("aws-us-east-1");
    expect(await h.ok(["db", "locations"])).toMatch(/^CODE\s+LOCATION\n.*aws-us-east-1/s);
  });

  it("db show --instance-urls gives a URL per location that reaches that location's copy", async () => {
    await h.ok(["group", "locations", "add", "default", "aws-eu-west-1"]);
    const instances = await h.json<Array<{ location: string; type: string; url: string }>>([
      "db",
      "show",
      "shop",
      "--instance-urls",
    ]);
    expect(instances.map((i) => [i.location, i.type])).toEqual([
      ["aws-us-east-1", "primary"],
      ["aws-eu-west-1", "replica"],
    ]);
    expect(instances[1]!.url).toBe(`${h.url}/db/admin/shop@aws-eu-west-1/`);
    const jwt = (await h.ok(["db", "tokens", "create", "shop"])).trim();
    for (const i of instances) expect(await select1(i.url, jwt)).toBe("ok");
  });

  it("db tokens invalidate and group tokens invalidate make earlier tokens stop working", async () => {
    const url = (await h.ok(["db", "show", "shop", "--url"])).trim();
    const dbToken = (await h.ok(["db", "tokens", "create", "shop"])).trim();
    const groupToken = (await h.ok(["group", "tokens", "create", "default"])).trim();
    expect(await select1(url, dbToken)).toBe("ok");
    // Without a terminal to ask on, it wants --yes.
    expect(await h.fails(["db", "tokens", "invalidate", "shop"])).toContain("add --yes");
    expect(await select1(url, dbToken)).toBe("ok");
    expect(await h.ok(["db", "tokens", "invalidate", "shop", "--yes"])).toBe(
      "Invalidated every token of database shop. Mint new ones with `shoal db tokens create shop`.\n",
    );
    expect(await select1(url, dbToken)).not.toBe("ok");
    // A database's rotation leaves its group's tokens working; the group's ends them all.
    expect(await select1(url, groupToken)).toBe("ok");
    const fresh = (await h.ok(["db", "tokens", "create", "shop"])).trim();
    expect(await h.json(["group", "tokens", "invalidate", "default", "--yes"])).toEqual({
      invalidated: "group default",
    });
    expect(await select1(url, groupToken)).not.toBe("ok");
    expect(await select1(url, fresh)).not.toBe("ok");
    expect(await h.fails(["group", "tokens", "invalidate", "nosuch", "--yes"])).toContain("shoal group list");
  });

  it("org members invite prints what the invited person accepts with, and org destroy deletes a team", async () => {
    await h.ok(["org", "create", "Crew"]);
    const crew = ["--org", "crew"];
    const invited = await h.json(["org", "members", "invite", "sam@example.com", "--admin", ...crew]);
    expect(invited).toMatchObject({ Email: "sam@example.com", Role: "admin", Token: expect.any(String) });
    const text = await h.ok(["org", "members", "invite", "kim@example.com", ...crew]);
    expect(text).toContain("Invited kim@example.com to organization crew as member.");
    expect(text).toMatch(/POST \/v1\/user\/invites\/\d+\/accept and \{"token": "[^"]+"\}/);
    const pending = (await api().get("/v1/organizations/crew/invites")).body.invites;
    expect(pending.map((i: { Email: string }) => i.Email).sort()).toEqual([
      "kim@example.com",
      "sam@example.com",
    ]);

    expect(await h.fails(["org", "destroy", "crew"])).toContain("add --yes");
    expect(await h.ok(["org", "destroy", "crew", "--yes"])).toBe("Deleted organization crew.\n");
    expect((await h.json<Array<{ slug: string }>>(["org", "list"])).map((o) => o.slug)).toEqual(["admin"]);
    expect(await h.fails(["org", "destroy", "crew", "--yes"])).toContain("shoal org list");
  });

  it("db create starts a database from a SQLite file, a SQL dump, or another database as it was at a moment", async () => {
    const file = path.join(h.home, "local.db");
    const local = new Database(file);
    local.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('from a file')");
    local.close();
    const dump = path.join(h.home, "notes.sql");
    writeFileSync(dump, "CREATE TABLE notes (body TEXT);\nINSERT INTO notes VALUES ('from a dump');\n");
    const token = async (db: string) => (await h.ok(["db", "tokens", "create", db])).trim();
    const rows = async (db: string) => {
      const c = createClient({ url: `${h.url}/db/admin/${db}/`, authToken: await token(db) });
      try {
        return (await c.execute("SELECT body FROM notes ORDER BY rowid")).rows.map((r) => r.body);
      } finally {
        c.close();
      }
    };
    await h.ok(["db", "create", "from-file", "--from-file", file]);
    expect(await rows("from-file")).toEqual(["from a file"]);
    await h.ok(["db", "create", "from-dump", "--from-dump", dump]);
    expect(await rows("from-dump")).toEqual(["from a dump"]);
    // Each option takes its own kind of file, and one source at a time.
    expect(await h.fails(["db", "create", "wrong", "--from-file", dump])).toContain(
      "not a SQLite database file",
    );
    expect(await h.fails(["db", "create", "wrong", "--from-dump", file])).toContain("use --from-file");
    expect(await h.fails(["db", "create", "wrong", "--from-db", "shop", "--from-dump", dump])).toContain(
      "give one of --from-db, --from-file and --from-dump",
    );
    expect(await h.fails(["db", "create", "wrong", "--timestamp", new Date().toISOString()])).toContain(
      "give --from-db too",
    );

    // A copy as of a moment between two writes has the first and not the second.
    const c = createClient({ url: `${h.url}/db/admin/from-dump/`, authToken: await token("from-dump") });
    await new Promise((r) => setTimeout(r, 300));
    const between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 300));
    await c.execute("INSERT INTO notes VALUES ('later')");
    c.close();
    await h.ok(["db", "create", "as-it-was", "--from-db", "from-dump", "--timestamp", between]);
    expect(await rows("as-it-was")).toEqual(["from a dump"]);
    expect(await rows("from-dump")).toEqual(["from a dump", "later"]);
  });

  it("db inspect shows a database's size and this month's rows, and --queries its costliest statements", async () => {
    await h.ok(["db", "create", "ledger"]);
    const jwt = (await h.ok(["db", "tokens", "create", "ledger"])).trim();
    const c = createClient({ url: `${h.url}/db/admin/ledger/`, authToken: jwt });
    await c.execute("CREATE TABLE entries (amount INTEGER)");
    for (let i = 0; i < 3; i++) await c.execute("INSERT INTO entries VALUES (1)");
    await c.execute("SELECT * FROM entries");
    c.close();
    // Usage reaches the store at the node's next flush.
    let inspected: Record<string, any> = {};
    for (let i = 0; i < 50 && !(inspected.rows_written >= 3); i++) {
      inspected = await h.json(["db", "inspect", "ledger"]);
      if (!(inspected.rows_written >= 3)) await new Promise((r) => setTimeout(r, 200));
    }
    expect(inspected).toMatchObject({ name: "ledger", rows_written: 3, rows_read: 3 });
    expect(inspected.storage_bytes).toBeGreaterThan(0);
    const text = await h.ok(["db", "inspect", "ledger"]);
    expect(text).toMatch(/rows written this month\s+3\n/);
    expect(text).toMatch(/size\s+\d+\.\d KiB\n/);
    const queries = await h.json<Array<{ query: string; count: number }>>([
      "db",
      "inspect",
      "ledger",
      "--queries",
    ]);
    expect(queries).toContainEqual(
      expect.objectContaining({ query: "INSERT INTO entries VALUES (1)", count: 3 }),
    );
    expect(await h.ok(["db", "inspect", "ledger", "--queries"])).toMatch(
      /^STATEMENT\s+ROWS READ\s+ROWS WRITTEN\s+RUNS\n/,
    );
    expect(await h.fails(["db", "inspect", "nosuch"])).toContain("shoal db list");
  });

  it("plan show gives the plan, overages, and the month's use against each quota", async () => {
    const shown = await h.json(["plan", "show"]);
    expect(shown).toMatchObject({ plan: expect.any(String), overages: expect.any(Boolean) });
    expect(shown.usage.databases).toBeGreaterThanOrEqual(1);
    const text = await h.ok(["plan", "show"]);
    expect(text).toMatch(
      new RegExp(`^Plan ${shown.plan}, overages (on|off)\\.\nRESOURCE\\s+USED\\s+QUOTA\n`),
    );
    expect(text).toMatch(new RegExp(`databases\\s+${shown.usage.databases}\\s+`));
  });
});
