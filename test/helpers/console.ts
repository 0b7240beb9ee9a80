import { readFileSync } from "node:fs";
import { mkdir, mkdtemp } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { buildConsole } from "../../scripts/build-console.mjs";

/** Where the browser tests leave their screenshots (gitignored), for a person to look at. */
export const SCREENSHOTS = path.resolve(import.meta.dirname, "../../test-output/console-screenshots");

let built: Promise<string> | undefined;

/** The console built once per test file into a temp folder, so tests never race `npm run build`. */
export function builtConsole(): Promise<string> {
  built ??= (async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "shoal-console-"));
    await buildConsole(dir);
    return dir;
  })();
  return built;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/**
 * Runs axe-core on the page as it is (WCAG 2.1 A and AA rules) and fails on any serious or
 * critical violation. axe is evaluated through the DevTools protocol, which the page's CSP
 * doesn't govern, so the page's own policy stays as strict as it is in production.
 */
export async function expectAccessible(page: Page, view: string): Promise<void> {
  const loaded = await page.evaluate("typeof window.axe === 'object'");
  if (!loaded) await page.evaluate(axeSource);
  const violations = (await page.evaluate(`axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
      resultTypes: ["violations"],
    }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target })) })))`)) as AxeViolation[];
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious, `${view}: ${JSON.stringify(serious, null, 1)}`).toEqual([]);
}

/** At a phone's width, the page never scrolls sideways and the given controls are on screen. */
export async function expectFitsPhone(page: Page, view: string): Promise<void> {
  // Evaluated in the page (as text: the tests compile without the DOM library).
  const widths = (await page.evaluate(
    "({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })",
  )) as { scroll: number; client: number };
  expect(widths.scroll, `${view} scrolls sideways at ${widths.client} px`).toBeLessThanOrEqual(widths.client);
  // Controls inside a region that scrolls by itself (a wide table) are reachable by scrolling it.
  const offscreen = (await page.evaluate(`[...document.querySelectorAll("button, a, input, select, textarea")]
    .filter((el) => {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) return false;
      if (el.closest("dialog:not([open]), .table-wrap, .code-wrap, .skip")) return false;
      return r.left < 0 || r.right > innerWidth + 1;
    })
    .map((el) => el.outerHTML.slice(0, 80))`)) as string[];
  expect(offscreen, `${view}: controls outside the screen`).toEqual([]);
}

/** Signs in through the form, as a person would. */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/console`);
  await page.getByLabel("API token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}
