import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/lib/logger.js";
import { scrape } from "../helpers/metrics.js";
import { killAndRemove, type ShoalProcess, spawnShoal } from "../helpers/process.js";

const TOKEN = "scraper-secret-0123456789abcdef";

describe("the metrics settings", () => {
  it("reads SHOAL_METRICS_TOKEN and SHOAL_METRICS_PER_DATABASE, refusing bad values by name", () => {
    const c = loadConfig({ SHOAL_METRICS_TOKEN: TOKEN, SHOAL_METRICS_PER_DATABASE: "1" }, "x");
    expect(c).toMatchObject({ metricsToken: TOKEN, metricsPerDatabase: true });
    expect(loadConfig({}, "x")).toMatchObject({ metricsToken: undefined, metricsPerDatabase: false });
    expect(loadConfig({ SHOAL_METRICS_PER_DATABASE: "false" }, "x").metricsPerDatabase).toBe(false);
    expect(() => loadConfig({ SHOAL_METRICS_TOKEN: "short" }, "x")).toThrow(
      /SHOAL_METRICS_TOKEN: must be at least 16/,
    );
    expect(() => loadConfig({ SHOAL_METRICS_TOKEN: "has a space in it, sadly" }, "x")).toThrow(
      /SHOAL_METRICS_TOKEN/,
    );
    expect(() => loadConfig({ SHOAL_METRICS_PER_DATABASE: "yes" }, "x")).toThrow(
      /SHOAL_METRICS_PER_DATABASE/,
    );
  });

  it("never logs the scrape token, even inside a logged config", () => {
    let out = "";
    const sink = new Writable({
      write(chunk, _enc, done) {
        out += String(chunk);
        done();
      },
    });
    const config = loadConfig({ SHOAL_METRICS_TOKEN: TOKEN }, "x");
    createLogger("info", sink).info({ config, metricsToken: TOKEN }, "settings");
    expect(out).toContain("settings");
    expect(out).not.toContain(TOKEN);
  });
});

describe("a shoal process with SHOAL_METRICS_TOKEN", () => {
  let running: ShoalProcess | undefined;
  let dataDir: string | undefined;
  afterEach(async () => {
    await killAndRemove(running, dataDir);
  });

  it("lets a scraper read /metrics with that token, and keeps it out of its output", async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "shoal-metrics-"));
    running = await spawnShoal({
      SHOAL_DATA_DIR: dataDir,
      SHOAL_METRICS_TOKEN: TOKEN,
      SHOAL_LOG_LEVEL: "info",
    });
    const s = await scrape(running.url, TOKEN);
    expect(s.family("shoal_api_requests_total")?.type).toBe("counter");
    expect((await fetch(`${running.url}/metrics`)).status).toBe(401);
    expect(running.output()).not.toContain(TOKEN);
  });
});
