import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@libsql/client";
import { exportJWK, generateKeyPair } from "jose";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "../helpers/browser.js";
import { builtConsole, expectAccessible, screenshot, signIn } from "../helpers/console.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let b: TestBrowser;
let context: BrowserContext;
let page: Page;
let idp: Server;
let jwksUrl: string;
const requested: string[] = [];
const cspViolations: string[] = [];

const admin = () => client(h.url, h.adminToken);
const nav = (name: string) => page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name });
/** Opens one of the database page's tabs, and waits for it to be the current one. */
async function tab(name: string): Promise<void> {
  const link = page.getByRole("navigation", { name: /^Tabs for / }).getByRole("link", { name, exact: true });
  await link.click();
  await page.locator(`nav.tabs a[aria-current="page"]`, { hasText: name }).waitFor();
}

beforeAll(async () => {
  // An identity provider's key set, for the identity-provider section.
  const { publicKey } = await generateKeyPair("RS256", { extractable: true });
  const keys = [{ ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" }];
  idp = createServer((_req, res) => res.writeHead(200).end(JSON.stringify({ keys })));
  await new Promise<void>((resolve) => idp.listen(0, "127.0.0.1", resolve));
  jwksUrl = `http://127.0.0.1:${(idp.address() as AddressInfo).port}/jwks.json`;
  const [dir, browser] = await Promise.all([builtConsole(), launchBrowser()]);
  h = await startTestShoal({}, { consoleDir: dir });
  b = browser;
  context = await b.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: h.url });
  page = await context.newPage();
  // Generous: a real failure still fails, and a loaded CI machine is not one.
  page.setDefaultTimeout(25_000);
  page.on("request", (r) => requested.push(r.url()));
  page.on("console", (m) => {
    if (/Content.Security.Policy/i.test(m.text())) cspViolations.push(m.text());
  });
});

afterAll(async () => {
  await context?.close();
  await b?.close();
  await h?.close();
  idp?.close();
});

describe("the console, driven in a real browser", { timeout: 90_000 }, () => {
  it("signs in with a pasted API token and shows the personal organization", async () => {
    await signIn(page, h.url, h.adminToken);
    await page.getByRole("heading", { name: "admin (personal)" }).waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(1);
    await screenshot(page, "01-overview");
    await expectAccessible(page, "overview");
  });

  it("turns overages on", async () => {
    await page.getByRole("button", { name: "Turn overages on" }).click();
    await page.getByRole("status").filter({ hasText: "Overages are on." }).waitFor();
    await page.getByRole("button", { name: "Turn overages off" }).waitFor();
    expect((await admin().get("/v1/organizations/admin")).body.organization.overages).toBe(true);
  });

  it("creates a group and adds a location to it, with each location's state", async () => {
    await nav("Groups").click();
    await page.getByLabel("Group name").fill("web");
    await page.getByLabel("Primary location").selectOption("aws-us-east-1");
    await page.getByRole("button", { name: "Create group" }).click();
    await page.getByRole("heading", { name: "web" }).waitFor();
    await page.getByRole("button", { name: "Add location aws-eu-west-1" }).click();
    await page.getByText("Added aws-eu-west-1").waitFor();
    await page.getByRole("button", { name: "Remove location aws-eu-west-1" }).waitFor();
    await page.getByText(/in sync|catching up/).waitFor();
    const g = (await admin().get("/v1/organizations/admin/groups/web")).body.group;
    expect(g.locations).toEqual(["aws-us-east-1", "aws-eu-west-1"]);
    await screenshot(page, "02-group");
    await expectAccessible(page, "group");
  });

  it("creates a database in the group and shows how to connect", async () => {
    await nav("Databases").click();
    await page.getByLabel("Database name").fill("notes");
    await page.getByLabel("Group").selectOption("web");
    await page.getByRole("button", { name: "Create database" }).click();
    await page.getByRole("heading", { name: "notes" }).waitFor();
    await expect
      .poll(() => page.getByLabel("URL (by path, works without DNS)").inputValue())
      .toBe(`${h.url}/db/admin/notes/`);
    await page.getByText("@libsql/client", { exact: false }).first().waitFor();
    const db = (await admin().get("/v1/organizations/admin/databases/notes")).body.database;
    expect(db.group).toBe("web");
    expect(db.regions).toEqual(["aws-us-east-1", "aws-eu-west-1"]);
  });

  it("runs CREATE TABLE, INSERT and SELECT in the SQL editor and shows the rows with their types", async () => {
    await page.getByRole("link", { name: "Open SQL editor" }).click();
    await page.getByRole("heading", { name: "SQL editor" }).waitFor();
    await page
      .getByLabel("Statements", { exact: true })
      .fill(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, score REAL);\n" +
          "INSERT INTO notes (body, score) VALUES ('hello', 1.5), ('world; with a semicolon', NULL);\n" +
          "SELECT id, body, score FROM notes ORDER BY id;",
      );
    await page.getByRole("button", { name: "Run" }).click();
    const results = page.getByRole("region", { name: "Result rows" });
    await results.getByText("world; with a semicolon").waitFor();
    await results.getByText("hello").waitFor();
    const header = await results.locator("th").allInnerTexts();
    expect(header.map((t) => t.replace(/\s+/g, " ").trim())).toEqual([
      "id INTEGER",
      "body TEXT",
      "score REAL",
    ]);
    expect(await results.locator("td.v-null").count()).toBe(1);
    expect(await results.locator("td.v-float").first().innerText()).toContain("1.5");

    // An engine error is shown as the engine words it, and the history keeps both runs.
    await page.getByLabel("Statements", { exact: true }).fill("SELECT * FROM nowhere");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("alert").filter({ hasText: "no such table: nowhere" }).waitFor();
    expect(await page.locator(".history li").count()).toBe(2);
    await screenshot(page, "03-sql-editor");
    await expectAccessible(page, "sql editor");
  });

  it("charts the database's usage per day, fed by Shoal's per-day usage route", async () => {
    await page.getByRole("link", { name: "notes" }).click();
    await page.getByRole("heading", { name: "Usage, last 30 days" }).waitFor();
    await page.locator(".chart canvas").first().waitFor();
    expect(await page.locator(".chart canvas").count()).toBe(4);
    const days = (await admin().get("/v1/organizations/admin/databases/notes/usage/daily")).body.database
      .days;
    expect(days.at(-1).usage.rows_written).toBeGreaterThanOrEqual(2);
    await page
      .getByText(`${days.at(-1).usage.rows_written} in all`)
      .first()
      .waitFor();
    await screenshot(page, "04-database");
    await expectAccessible(page, "database");
  });

  it("mints a database token, shows it once with a copy button, and the token works", async () => {
    await tab("Tokens");
    await page.getByLabel("Expires after").selectOption("1h");
    await page.getByRole("button", { name: "Mint token" }).click();
    const once = page.getByRole("region", { name: "New database token" });
    const jwt = await once.getByLabel("New database token").inputValue();
    expect(jwt.split(".")).toHaveLength(3);
    await once.getByRole("button", { name: "Copy" }).click();
    await once.getByText("Copied.").waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(jwt);
    await screenshot(page, "05-database-token");
    await once.getByRole("button", { name: "I have copied it" }).click();
    expect(await page.getByRole("region", { name: "New database token" }).count()).toBe(0);
    expect(await page.content()).not.toContain(jwt);

    const c = createClient({ url: `${h.url}/db/admin/notes/`, authToken: jwt });
    expect((await c.execute("SELECT count(*) AS n FROM notes")).rows[0]?.n).toBe(2);
    c.close();
  });

  it("creates a branch and a point-in-time restore from a chosen moment", async () => {
    // The moment is a whole second (what the picker takes) after the rows so far and before the next.
    await new Promise((r) => setTimeout(r, 1100));
    const moment = await page.evaluate(() => {
      const t = new Date();
      const p = (n: number) => String(n).padStart(2, "0");
      return `${t.getFullYear()}-${p(t.getMonth() + 1)}-${p(t.getDate())}T${p(t.getHours())}:${p(t.getMinutes())}:${p(t.getSeconds())}`;
    });
    const c = createClient({
      url: `${h.url}/db/admin/notes/`,
      authToken: (await admin().post("/v1/organizations/admin/databases/notes/auth/tokens")).body.jwt,
    });
    await new Promise((r) => setTimeout(r, 1100));
    await c.execute("INSERT INTO notes (body) VALUES ('after the moment')");

    await nav("Databases").click();
    await page.getByLabel("Database name").fill("notes-restored");
    await page.getByLabel("Another database as it was at a moment").check();
    await page.getByLabel("Source database").fill("notes");
    await page.getByLabel("Moment to restore").fill(moment);
    await page.getByRole("button", { name: "Create database" }).click();
    await page.getByRole("heading", { name: "notes-restored" }).waitFor();
    await page.getByText("Branched from notes").waitFor();

    await nav("Databases").click();
    await page.getByLabel("Database name").fill("notes-branch");
    await page.getByLabel("A copy of another database").check();
    await page.getByLabel("Source database").fill("notes");
    await page.getByRole("button", { name: "Create database" }).click();
    await page.getByRole("heading", { name: "notes-branch" }).waitFor();

    const count = async (db: string) => {
      const jwt = (await admin().post(`/v1/organizations/admin/databases/${db}/auth/tokens`)).body.jwt;
      const d = createClient({ url: `${h.url}/db/admin/${db}/`, authToken: jwt });
      const n = (await d.execute("SELECT count(*) AS n FROM notes")).rows[0]?.n;
      d.close();
      return n;
    };
    expect(await count("notes-restored")).toBe(2);
    expect(await count("notes-branch")).toBe(3);
    c.close();
  });

  it("mints a token limited to tables, whose rules the database enforces", async () => {
    // On the branch's page, where the last test left off.
    await tab("Tokens");
    await page.getByLabel("Access").selectOption("tables");
    const rule = page.getByRole("group", { name: "Rule 1" });
    await rule.getByLabel("Tables", { exact: true }).fill("notes");
    // A rule starts with reading; add inserting.
    await rule.getByRole("checkbox", { name: "Insert rows" }).check();
    await expectAccessible(page, "table-limited token form");
    await page.getByRole("button", { name: "Mint token" }).click();
    const once = page.getByRole("region", { name: "New database token" });
    const jwt = await once.getByLabel("New database token").inputValue();
    await once.getByRole("button", { name: "I have copied it" }).click();
    const c = createClient({ url: `${h.url}/db/admin/notes-branch/`, authToken: jwt });
    await c.execute("INSERT INTO notes (body) VALUES ('from a limited token')");
    await expect(c.execute("DELETE FROM notes")).rejects.toThrow(/data_delete on table notes/);
    c.close();
    await page.getByLabel("Access").selectOption("full-access");
  });

  it("searches and pages through many databases", async () => {
    const api = admin();
    expect(
      (await api.post("/v1/organizations/admin/groups", { name: "bulk", location: "aws-us-east-1" })).status,
    ).toBe(200);
    for (let i = 0; i < 55; i++) {
      const r = await api.post("/v1/organizations/admin/databases", {
        name: `bulk-${String(i).padStart(2, "0")}`,
        group: "bulk",
      });
      expect(r.status, r.text).toBe(200);
    }
    await nav("Databases").click();
    const table = page.getByRole("region", { name: "Databases", exact: true });
    await table.getByRole("link", { name: "bulk-00" }).waitFor();
    expect(await table.locator("tbody tr").count()).toBe(50);
    await page.getByRole("button", { name: "Next page" }).click();
    await page.getByText("Page 2").waitFor();
    await table.getByRole("link", { name: "notes-branch" }).waitFor();
    await page.getByLabel("Search by name").fill("BULK-5");
    await table.getByRole("link", { name: "bulk-54" }).waitFor();
    await expect.poll(() => table.locator("tbody tr").count()).toBe(5);
    await page.getByText("Page 1").waitFor();
    await screenshot(page, "06-databases");
    await expectAccessible(page, "databases");
  });

  it("deletes a database only after the name is typed in the confirmation", async () => {
    await page.getByLabel("Search by name").fill("bulk-00");
    await page
      .getByRole("region", { name: "Databases", exact: true })
      .getByRole("link", { name: "bulk-00" })
      .click();
    await tab("Delete");
    await page.getByRole("button", { name: "Delete database" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete database bulk-00?" });
    const confirm = dialog.getByRole("button", { name: "Delete database" });
    expect(await confirm.isDisabled()).toBe(true);
    await screenshot(page, "07-delete-confirmation");
    await dialog.getByLabel("Type bulk-00 to confirm").fill("bulk-00");
    await confirm.click();
    await page.getByRole("heading", { name: "Databases", exact: true }).waitFor();
    expect((await admin().get("/v1/organizations/admin/databases/bulk-00")).status).toBe(404);
  });

  it("lists the deleted database as recently deleted and restores it", async () => {
    const deleted = page.getByRole("region", { name: "Recently deleted databases" });
    await deleted.getByRole("cell", { name: "bulk-00", exact: true }).waitFor();
    await expectAccessible(page, "recently deleted");
    await deleted.getByRole("button", { name: "Restore bulk-00" }).click();
    await page.getByText("Database bulk-00 is back.").waitFor();
    expect((await admin().get("/v1/organizations/admin/databases/bulk-00")).status).toBe(200);
    await page.getByText("No deleted database can be restored.").waitFor();
  });

  it("changes a database's settings", async () => {
    // A tab has an address of its own.
    await page.goto(`${h.url}/console#/orgs/admin/databases/notes/settings`);
    await page.getByLabel("Size limit").fill("256mb");
    await page.getByLabel("Block writes").check();
    await page.getByLabel("Allowed IP addresses").fill("127.0.0.1\n10.0.0.0/8");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").waitFor();
    const cfg = (await admin().get("/v1/organizations/admin/databases/notes/configuration")).body;
    expect(cfg).toMatchObject({
      size_limit: "256mb",
      block_writes: true,
      allowed_ips: ["127.0.0.1", "10.0.0.0/8"],
    });
    // Refused inputs come back in words, and nothing changes.
    await page.getByLabel("Allowed IP addresses").fill("not-an-address");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByRole("alert").filter({ hasText: "not-an-address" }).waitFor();
    expect(
      (await admin().get("/v1/organizations/admin/databases/notes/configuration")).body.allowed_ips,
    ).toEqual(["127.0.0.1", "10.0.0.0/8"]);
  });

  it("creates an API token shown once, and lists the instance's users and nodes", async () => {
    await nav("API tokens").click();
    await page.getByLabel("Token name").fill("ci-deploy");
    await page.getByRole("button", { name: "Create token" }).click();
    const value = await page.getByRole("textbox", { name: "API token ci-deploy" }).inputValue();
    expect((await client(h.url, value).get("/v1/auth/validate")).status).toBe(200);
    await screenshot(page, "08-api-tokens");
    await expectAccessible(page, "api tokens");

    await nav("Instance").click();
    await page.getByRole("region", { name: "Nodes", exact: true }).waitFor();
    await page.getByRole("region", { name: "Users", exact: true }).getByText("admin@localhost").waitFor();
    await screenshot(page, "09-instance");
    await expectAccessible(page, "instance");
  });

  it("trusts an identity provider's key set, refuses a URL that serves none, and removes it", async () => {
    await page.goto(`${h.url}/console#/orgs/admin/tokens`);
    const section = page.getByRole("region", { name: "Identity providers" });
    await section.getByText("None trusted.").waitFor();
    await page.getByLabel("Provider name").fill("local-idp");
    await page.getByLabel("Key set URL").fill(`${h.url}/health`);
    await page.getByRole("button", { name: "Trust provider" }).click();
    await section.getByText(/the key set can't be trusted/).waitFor();
    await page.getByLabel("Key set URL").fill(jwksUrl);
    await page.getByLabel(/^Issuer/).fill("https://idp.example");
    await page.getByRole("button", { name: "Trust provider" }).click();
    await section.getByRole("cell", { name: jwksUrl }).waitFor();
    expect((await admin().get("/v2/organizations/admin/jwks")).body.jwks).toEqual([
      { jwks_name: "local-idp", jwks_url: jwksUrl, issuer: "https://idp.example", audience: null },
    ]);
    await screenshot(page, "09-identity-providers");
    await expectAccessible(page, "identity providers");
    await section.getByRole("button", { name: "Remove" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click();
    await section.getByText("None trusted.").waitFor();
    expect((await admin().get("/v2/organizations/admin/jwks")).body.jwks).toEqual([]);
  });

  it("filters the audit log", async () => {
    await page.goto(`${h.url}/console#/orgs/admin/audit`);
    await page.getByLabel("Code").fill("org-set-overages");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("1 entry matches.").waitFor();
    const rows = page.getByRole("region", { name: "Audit log" }).locator("tbody tr");
    expect(await rows.count()).toBe(1);
    await screenshot(page, "10-audit-log");
    await expectAccessible(page, "audit log");
  });

  it("never puts the token in a URL and breaks no Content-Security-Policy rule", () => {
    expect(requested.length).toBeGreaterThan(20);
    expect(requested.filter((u) => u.includes(h.adminToken))).toEqual([]);
    expect(cspViolations).toEqual([]);
  });

  it("signs out and forgets the token", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API token").waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await page.reload();
    await page.getByLabel("API token").waitFor();
  });
});
