import { createClient } from "@libsql/client";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "../helpers/browser.js";
import { builtConsole, expectFitsPhone, screenshot, signIn } from "../helpers/console.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let b: TestBrowser;
let context: BrowserContext;
let page: Page;

const admin = () => client(h.url, h.adminToken);
const nav = (name: string) => page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name });

beforeAll(async () => {
  const [dir, browser] = await Promise.all([builtConsole(), launchBrowser()]);
  h = await startTestShoal({}, { consoleDir: dir });
  b = browser;
  // A group whose name sorts before `default`: the form must still pick `default`.
  await admin().post("/v1/organizations/admin/groups", { name: "aaa", location: "aws-eu-west-1" });
  await admin().post("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" });
  await admin().post("/v1/organizations/admin/databases", { name: "plain", group: "default" });
  context = await b.browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(25_000);
  await signIn(page, h.url, h.adminToken);
}, 120_000);

afterAll(async () => {
  await context?.close();
  await b?.close();
  await h?.close();
});

describe("the console's details", { timeout: 90_000 }, () => {
  it("says on an unlimited plan that overages change nothing", async () => {
    await page.getByRole("heading", { name: "admin (personal)" }).waitFor();
    await page.getByText("plan has no quotas, so nothing is ever blocked").waitFor();
  });

  it("tells the administrator on the overview whether the nodes are up and how backups stand", async () => {
    const instance = page.getByRole("region", { name: "This Shoal" });
    await instance.getByText("Nodes: 1 of 1 live.").waitFor();
    await instance.getByText("Backups: off").waitFor();
    const shards = h.shoal.deps.supervisor.shards.length;
    await instance.getByText(`Shard processes on this node: ${shards} of ${shards} serving.`).waitFor();
    await instance.getByText("Replicas: none on this node").waitFor();
    expect(await instance.getByRole("link", { name: /Instance page/ }).getAttribute("href")).toBe("#/admin");
  });

  it("picks the default group for a new database, whatever sorts first", async () => {
    await nav("Databases").click();
    const group = page.getByLabel("Group");
    // The groups arrive after the form is drawn.
    await group.locator("option").nth(1).waitFor({ state: "attached" });
    expect(await group.inputValue()).toBe("default");
    expect(await group.locator("option").allTextContents()).toEqual([
      "default (aws-us-east-1)",
      "aaa (aws-eu-west-1)",
    ]);
  });

  it("shows a Notes column only when a database on the page has something to note", async () => {
    const table = page.getByRole("region", { name: "Databases" }).getByRole("table");
    await table.getByRole("link", { name: "plain" }).waitFor();
    expect(await table.getByRole("columnheader").allTextContents()).toEqual(["Name", "Group", "Locations"]);
    await admin().patch("/v1/organizations/admin/databases/plain/configuration", { block_writes: true });
    await page.reload();
    await table.getByRole("columnheader", { name: "Notes" }).waitFor();
    await table.getByRole("cell", { name: "writes blocked" }).waitFor();
  });

  it("offers a way back from a database that doesn't exist", async () => {
    await page.goto(`${h.url}/console#/orgs/admin/databases/nosuch`);
    await page.getByRole("heading", { name: "nosuch" }).waitFor();
    await screenshot(page, "details-missing-database");
    await page.getByRole("link", { name: "Back to the databases of admin" }).click();
    await page.getByRole("heading", { name: "Databases", exact: true }).waitFor();
  });

  it("keeps the organization's sections in the sidebar on the Instance page", async () => {
    await nav("Instance").click();
    await page.getByRole("heading", { name: "Instance" }).first().waitFor();
    const databases = nav("Databases");
    expect(await databases.getAttribute("href")).toBe("#/orgs/admin/databases");
    await databases.click();
    await page.getByRole("heading", { name: "Databases", exact: true }).waitFor();
  });

  it("shows an organization without databases its first steps, and no longer once it has one", async () => {
    const made = await admin().post("/v1/organizations", { name: "Empty Team" });
    const slug = made.body.organization.slug as string;
    await page.goto(`${h.url}/console#/orgs/${slug}`);
    const steps = page.getByRole("region", { name: "First steps" });
    await steps.waitFor();
    // Made after sign-in, it is still named in the organization picker.
    expect(await page.getByLabel("Organization", { exact: true }).inputValue()).toBe(slug);
    await steps.getByRole("link", { name: "Groups" }).waitFor();
    await screenshot(page, "details-first-steps");
    await admin().post(`/v1/organizations/${slug}/groups`, { name: "default", location: "aws-us-east-1" });
    await admin().post(`/v1/organizations/${slug}/databases`, { name: "first", group: "default" });
    await page.reload();
    await page.getByRole("heading", { name: "Empty Team" }).waitFor();
    await page.getByText("Plan").first().waitFor();
    expect(await steps.count()).toBe(0);
  });

  it("gives the day and the value under the pointer in a usage chart", async () => {
    const jwt = (await admin().post("/v1/organizations/admin/databases/plain/auth/tokens")).body
      .jwt as string;
    await admin().patch("/v1/organizations/admin/databases/plain/configuration", { block_writes: false });
    const sql = createClient({ url: `${h.url}/db/admin/plain/`, authToken: jwt });
    await sql.execute("CREATE TABLE t (x)");
    await sql.execute("INSERT INTO t VALUES (1), (2), (3), (4), (5)");
    sql.close();
    // Today's counts reach the store at the next usage flush.
    for (let i = 0; i < 50; i++) {
      const days = (await admin().get("/v1/organizations/admin/databases/plain/usage/daily")).body;
      if (JSON.stringify(days).includes('"rows_written":5')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await page.goto(`${h.url}/console#/orgs/admin/databases/plain`);
    const chart = page.locator("figure.chart").filter({ hasText: "Rows written" });
    const over = chart.locator(".u-over");
    await over.waitFor();
    const box = (await over.boundingBox())!;
    // Today is the last day of the window: the right edge.
    await over.hover({ position: { x: box.width - 2, y: box.height / 2 } });
    const values = chart.locator(".u-legend .u-value");
    await expect.poll(() => values.nth(1).textContent()).toBe("5");
    await screenshot(page, "details-chart-hover");
    expect(await values.nth(0).textContent()).toMatch(/^[A-Z][a-z]{2} \d{1,2}$/);
  });

  it("names a value's stored type in the SQL editor only where its column's type wouldn't suggest it", async () => {
    await page.goto(`${h.url}/console#/orgs/admin/databases/plain`);
    await page.getByRole("link", { name: "Open SQL editor" }).click();
    await page.getByRole("heading", { name: "SQL editor" }).waitFor();
    // Exactly: the database page's "Most expensive statements" table is labelled too.
    await page
      .getByLabel("Statements", { exact: true })
      .fill(
        "CREATE TABLE m (n INTEGER, s TEXT, x);\n" +
          "INSERT INTO m VALUES (1, 'a', 1), ('two', x'ab', 'x'), (NULL, 3, 2.5);\n" +
          "SELECT n, s, x FROM m ORDER BY rowid;",
      );
    await page.getByRole("button", { name: "Run" }).click();
    const results = page.getByRole("region", { name: "Result rows" }).last();
    await results.getByText("two").waitFor();
    // Only 'two' in an INTEGER column and a blob in a TEXT one are labelled (SQLite made the 3 text,
    // as TEXT columns do); x has no declared type, so any type is as likely there.
    expect(await results.locator(".vt").allTextContents()).toEqual(["text", "blob"]);
    // Every value still has its type on hover.
    expect(await results.locator("td").first().getAttribute("title")).toBe("integer");

    // Beside the editor, the new table with its columns; a name clicked goes into the statements.
    const tables = page.getByRole("region", { name: "Tables" });
    await tables.getByRole("button", { name: "m", exact: true }).waitFor();
    expect(await tables.getByText("INTEGER").count()).toBeGreaterThan(0);
    await page.getByLabel("Statements", { exact: true }).fill("SELECT");
    await tables.getByRole("button", { name: "n", exact: true }).click();
    await tables.getByRole("button", { name: "m", exact: true }).click();
    expect(await page.getByLabel("Statements", { exact: true }).inputValue()).toBe("SELECT n m");
    await screenshot(page, "details-sql-schema");
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await expectFitsPhone(page, "sql editor with its schema");
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });
});
