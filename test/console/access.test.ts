import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_CSP } from "../../src/api/console.js";
import { launchBrowser, type TestBrowser } from "../helpers/browser.js";
import { builtConsole, expectAccessible, expectFitsPhone, screenshot, signIn } from "../helpers/console.js";
import { createUser, type TestUser } from "../helpers/factories.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

/** The page's own storage, read inside page.evaluate (the tests compile without the DOM library). */
declare const sessionStorage: { getItem(key: string): string | null };

let h: TestShoal;
let b: TestBrowser;
let viewer: TestUser;

const admin = () => client(h.url, h.adminToken);

async function newPage(browser: Browser, width = 1280, height = 900): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  // Generous: a real failure still fails, and a loaded CI machine is not one.
  page.setDefaultTimeout(25_000);
  return page;
}

beforeAll(async () => {
  const [dir, browser] = await Promise.all([builtConsole(), launchBrowser()]);
  h = await startTestShoal({}, { consoleDir: dir });
  b = browser;
  viewer = await createUser(h, "vera");
  const api = admin();
  expect((await api.post("/v1/organizations", { name: "Acme" })).status).toBe(200);
  expect(
    (await api.post("/v1/organizations/acme/groups", { name: "main", location: "aws-us-east-1" })).status,
  ).toBe(200);
  expect((await api.post("/v1/organizations/acme/databases", { name: "orders", group: "main" })).status).toBe(
    200,
  );
});

afterAll(async () => {
  await b?.close();
  await h?.close();
});

describe("who may do what in the console", { timeout: 90_000 }, () => {
  it("says clearly when a token is not accepted", async () => {
    const page = await newPage(b.browser);
    await page.goto(`${h.url}/console`);
    await page.getByLabel("API token").fill("not-a-real-token-at-all");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page
      .getByRole("alert")
      .filter({ hasText: "That token was not accepted: it is unknown, revoked or expired." })
      .waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await screenshot(page, "11-bad-token");
    await expectAccessible(page, "sign in");
    await page.context().close();
  });

  it("signs a person out, with the reason, when their token is revoked meanwhile", async () => {
    const minted = await admin().post("/v1/auth/api-tokens/short-lived");
    const page = await newPage(b.browser);
    await signIn(page, h.url, minted.body.token);
    expect((await admin().delete("/v1/auth/api-tokens/short-lived")).status).toBe(200);
    // The next request the page makes (whichever it is) finds the token gone.
    await page.evaluate('location.hash = "#/orgs/admin/databases"');
    await page
      .getByRole("alert")
      .filter({ hasText: "You were signed out. Your API token was not accepted" })
      .waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await page.context().close();
  });

  it("adds a viewer through the members view and sends an invite shown once", async () => {
    const page = await newPage(b.browser);
    await signIn(page, h.url, h.adminToken);
    await page.getByLabel("Organization", { exact: true }).selectOption("acme");
    await page.getByRole("heading", { name: "Acme" }).waitFor();
    await page.getByRole("link", { name: "Members" }).click();
    await page.getByLabel("Username", { exact: true }).fill("vera");
    await page.getByLabel("Role", { exact: true }).first().selectOption("viewer");
    await page.getByRole("button", { name: "Add member" }).click();
    await page.getByText("vera is now a viewer.").waitFor();
    const m = await admin().get("/v1/organizations/acme/members/vera");
    expect(m.body.member.role).toBe("viewer");

    await page.getByLabel("Username or e-mail").fill("carol@example.com");
    await page.getByRole("button", { name: "Invite" }).click();
    const once = page.getByRole("region", { name: /^Invite \d+ token$/ });
    expect((await once.getByRole("textbox").inputValue()).length).toBeGreaterThan(10);
    await page.getByRole("region", { name: "Pending invites" }).getByText("carol@example.com").waitFor();
    await screenshot(page, "12-members");
    await expectAccessible(page, "members");
    await page.context().close();
  });

  it("lets an invited person accept the invite in the console", async () => {
    const carol = await createUser(h, "carol");
    const page = await newPage(b.browser);
    await signIn(page, h.url, carol.token);
    await page.getByRole("region", { name: "Invitations for you" }).getByText("Acme").waitFor();
    await page.getByRole("button", { name: "Accept" }).click();
    await page
      .getByLabel("Organization", { exact: true })
      .locator("option", { hasText: "Acme" })
      .waitFor({ state: "attached" });
    expect((await admin().get("/v1/organizations/acme/members/carol")).body.member.role).toBe("member");
    await page.context().close();
  });

  it("shows a viewer no control it may not use", async () => {
    const page = await newPage(b.browser);
    await signIn(page, h.url, viewer.token);
    await page.goto(`${h.url}/console#/orgs/acme`);
    await page.getByText("Viewers can't change this.").waitFor();
    expect(await page.getByRole("button", { name: /overages/ }).count()).toBe(0);

    await page.getByRole("link", { name: "Groups" }).click();
    await page.getByRole("link", { name: "main" }).click();
    await page.getByText("Primary in").waitFor();
    expect(await page.getByRole("button", { name: /location|Delete group/ }).count()).toBe(0);

    await page.getByRole("link", { name: "Databases" }).first().click();
    await page.getByRole("link", { name: "orders" }).click();
    const sections = page.getByRole("navigation", { name: "Tabs for orders" });
    // A viewer gets no tab for deleting.
    await sections.getByRole("link", { name: "Overview" }).waitFor();
    expect(await sections.getByRole("link").allInnerTexts()).toEqual(["Overview", "Settings", "Tokens"]);
    await sections.getByRole("link", { name: "Tokens" }).click();
    await page.getByText("Viewers can't mint database tokens.").waitFor();
    expect(await page.getByRole("button", { name: /Mint token|Rotate/ }).count()).toBe(0);
    await sections.getByRole("link", { name: "Settings" }).click();
    await page.getByLabel("Size limit").waitFor();
    expect(await page.getByRole("button", { name: /Delete database|Save settings/ }).count()).toBe(0);
    expect(await page.getByLabel("Size limit").getAttribute("readonly")).not.toBeNull();
    expect(await page.getByLabel("Block writes").isDisabled()).toBe(true);
    await screenshot(page, "13-viewer-database");
    await expectAccessible(page, "database, as a viewer");

    expect(await page.getByRole("link", { name: "Open SQL editor" }).count()).toBe(0);
    await page.evaluate('location.hash = "#/orgs/acme/databases/orders/sql"');
    await page.getByText("Viewers can't run SQL here").waitFor();
    expect(await page.getByLabel("Statements", { exact: true }).count()).toBe(0);

    await page.getByRole("link", { name: "Databases" }).first().click();
    await page.getByRole("region", { name: "All databases" }).waitFor();
    expect(await page.getByRole("heading", { name: "New database" }).count()).toBe(0);
    await page.getByRole("link", { name: "Members" }).click();
    await page.getByRole("region", { name: "Members" }).getByRole("cell", { name: /^vera/ }).waitFor();
    expect(await page.getByRole("button", { name: /Add member|Remove|Invite/ }).count()).toBe(0);
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByText("Only owners and admins can read the audit log.").waitFor();
    expect(await page.getByRole("link", { name: "Instance" }).count()).toBe(0);

    // What the page hides, the API refuses: the same requests forced from the viewer's page.
    const forced = await page.evaluate(async () => {
      const token = sessionStorage.getItem("shoal.console.token");
      const send = async (method: string, path: string, body: unknown) => {
        const r = await fetch(path, {
          method,
          headers: { authorization: `Bearer ${token}` },
          body: JSON.stringify(body),
        });
        return { status: r.status, body: (await r.json()) as { error?: unknown } };
      };
      return [
        await send("POST", "/v1/organizations/acme/databases", { name: "sneaky", group: "main" }),
        await send("PATCH", "/v1/organizations/acme", { overages: true }),
        await send("DELETE", "/v1/organizations/acme/databases/orders", undefined),
      ];
    });
    for (const r of forced) {
      expect(r.status).toBe(403);
      expect(typeof r.body.error).toBe("string");
    }
    expect((await admin().get("/v1/organizations/acme/databases/sneaky")).status).toBe(404);
    expect((await admin().get("/v1/organizations/acme")).body.organization.overages).toBe(false);
    expect((await admin().get("/v1/organizations/acme/databases/orders")).status).toBe(200);
    await page.context().close();
  });

  it("works on a 390 px phone: no sideways scrolling, every control on screen", async () => {
    const page = await newPage(b.browser, 390, 844);
    await signIn(page, h.url, h.adminToken);
    const views: Array<[string, string]> = [
      ["overview", "#/orgs/acme"],
      ["databases", "#/orgs/acme/databases"],
      ["database", "#/orgs/acme/databases/orders"],
      ["sql", "#/orgs/acme/databases/orders/sql"],
      ["groups", "#/orgs/acme/groups"],
      ["group", "#/orgs/acme/groups/main"],
      ["members", "#/orgs/acme/members"],
      ["tokens", "#/orgs/acme/tokens"],
      ["audit", "#/orgs/acme/audit"],
      ["instance", "#/admin"],
    ];
    for (const [name, hash] of views) {
      await page.goto(`${h.url}/console${hash}`);
      await page.locator("main h1").first().waitFor();
      await page.waitForLoadState("networkidle");
      await expectFitsPhone(page, name);
      await screenshot(page, `phone-${name}`);
    }
    // The SQL editor is usable at that width: run a statement and read the result.
    await page.goto(`${h.url}/console#/orgs/acme/databases/orders/sql`);
    await page.getByRole("heading", { name: "SQL editor" }).waitFor();
    await page
      .getByLabel("Statements", { exact: true })
      .fill("SELECT 1 AS one, 'a wide text value that is longer than the screen is wide' AS t");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("region", { name: "Result rows" }).getByText("one").waitFor();
    await expectFitsPhone(page, "sql with results");
    await screenshot(page, "phone-sql-results");
    await expectAccessible(page, "sql at 390 px");
    await page.context().close();
  });
});

describe("how the console is served", () => {
  it("redirects / to the console", async () => {
    const r = await fetch(`${h.url}/`, { redirect: "manual" });
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBe("/console");
  });

  it("serves the page uncached under a strict Content-Security-Policy, with nothing inline", async () => {
    const r = await fetch(`${h.url}/console`);
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-cache");
    expect(r.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).not.toMatch(/unsafe-(inline|eval)/);
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    const html = await r.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    const assets = [
      ...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)" integrity="(sha384-[^"]+)"/g),
    ];
    expect(assets).toHaveLength(2);
    for (const [, path] of assets) {
      const a = await fetch(`${h.url}${path}`);
      expect(a.status).toBe(200);
      expect(a.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(path).toMatch(/-[A-Z0-9]{8}\.(js|css)$/);
    }
  });

  it("answers 404 for assets it doesn't have, and never serves outside its folder", async () => {
    for (const path of [
      "/console/assets/nope-12345678.js",
      "/console/assets/..%2F..%2Fpackage.json",
      "/console/assets/index.html",
    ]) {
      const r = await fetch(`${h.url}${path}`);
      expect(r.status, path).toBe(404);
      expect(await r.json()).toEqual({ error: "not found" });
    }
  });
});
