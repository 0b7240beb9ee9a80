/**
 * The version moves with each release and the changelog says what it changed: its newest entry is
 * the package's version, and every release kept as an upgrade fixture has an entry of its own.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const version = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string })
  .version;
const changelog = readFileSync(path.join(ROOT, "CHANGELOG.md"), "utf8");
const releases = [...changelog.matchAll(/^## (\d+\.\d+\.\d+) \((\d{4}-\d{2}-\d{2})\)$/gm)].map((m) => m[1]!);
const numeric = (v: string) => v.split(".").map(Number) as [number, number, number];
const newer = (a: string, b: string) => {
  const [x, y] = [numeric(a), numeric(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! > y[i]!;
  return false;
};

describe("the changelog", () => {
  it("names the package's version as its newest release, newest first", () => {
    expect(releases[0]).toBe(version);
    for (let i = 1; i < releases.length; i++) expect(newer(releases[i - 1]!, releases[i]!)).toBe(true);
  });

  it("has an entry for every release kept as an upgrade fixture, each older than this one", () => {
    const fixtures = readdirSync(path.join(ROOT, "test/fixtures/upgrade"));
    expect(fixtures.length).toBeGreaterThan(0);
    for (const f of fixtures) {
      expect(releases).toContain(f);
      expect(newer(version, f) || f === version).toBe(true);
    }
  });
});
