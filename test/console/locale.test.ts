import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "../helpers/browser.js";
import { builtConsole, screenshot, signIn } from "../helpers/console.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let b: TestBrowser;
let context: BrowserContext | undefined;

beforeAll(async () => {
  const [dir, browser] = await Promise.all([builtConsole(), launchBrowser({ posixLocale: true })]);
  h = await startTestShoal({}, { consoleDir: dir });
  b = browser;
  const admin = client(h.url, h.adminToken);
  await admin.post("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" });
  await admin.post("/v1/organizations/admin/databases", { name: "notes", group: "default" });
}, 120_000);

afterAll(async () => {
  await context?.close();
  await b?.close();
  await h?.close();
});

/** Opens the console in a fresh context and signs in; the page's own errors are collected. */
async function signedIn(locale?: string): Promise<{ page: Page; errors: string[]; reported: unknown }> {
  await context?.close();
  context = await b.browser.newContext({
    viewport: { width: 1280, height: 900 },
    ...(locale ? { locale } : {}),
  });
  const page = await context.newPage();
  page.setDefaultTimeout(25_000);
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // What the browser itself reports, on its blank page, before the console has loaded.
  const reported = await page.evaluate("navigator.language");
  await signIn(page, h.url, h.adminToken);
  await page.getByRole("heading", { name: "admin (personal)" }).waitFor();
  return { page, errors, reported };
}

describe("the console under a locale the browser's Intl refuses", { timeout: 90_000 }, () => {
  it("renders in a browser started as servers and containers run it (LANG=C.UTF-8)", async () => {
    const { page, errors, reported } = await signedIn();
    // What such a browser reports, and what Intl refuses: the case this test is about.
    expect(reported).toMatch(/@posix$/);
    // The console reads the nearest language Intl takes.
    expect(await page.evaluate("navigator.language")).toBe("en-US");
    // The charts (the one part that formats numbers for the locale) draw too.
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Databases" }).click();
    await page.getByRole("link", { name: "notes" }).click();
    await page.getByRole("heading", { name: "notes" }).waitFor();
    await page.locator("canvas").first().waitFor();
    await screenshot(page, "locale-posix-database");
    expect(errors).toEqual([]);
  });

  it("renders where the page is told a language Intl doesn't know at all", async () => {
    const { page, errors, reported } = await signedIn("xx-QQ-invalid@posix");
    expect(reported).toBe("xx-QQ-invalid@posix");
    expect(errors).toEqual([]);
    // Read as the nearest tag Intl takes (an unknown language is formatted in a default one).
    expect(await page.evaluate("navigator.language")).toBe("xx-QQ-invalid");
    expect(await page.evaluate("new Intl.NumberFormat(navigator.language).format(1234.5)")).toMatch(/1.?234/);
  });
});
