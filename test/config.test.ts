import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_LOCATIONS, loadConfig, parseLocations, SETTING_NAMES } from "../src/config.js";
import { usage } from "../src/start/command-line.js";

describe("configuration from the environment", () => {
  it("has documented defaults", () => {
    const c = loadConfig({}, "1.2.3");
    expect(c).toMatchObject({
      host: "127.0.0.1",
      port: 8080,
      adminUser: "admin",
      adminToken: undefined,
      dbDomain: "localhost",
      logLevel: "info",
      version: "1.2.3",
    });
    expect(c.dataDir).toMatch(/\/data$/);
    expect(c.locations.map((l) => l.code)).toEqual([
      "aws-us-east-1",
      "aws-us-east-2",
      "aws-us-west-2",
      "aws-eu-west-1",
      "aws-ap-northeast-1",
      "aws-ap-south-1",
    ]);
    expect(c.locations).toEqual(DEFAULT_LOCATIONS);
  });

  it("treats an empty variable as unset", () => {
    expect(loadConfig({ SHOAL_PORT: "", SHOAL_ADMIN_TOKEN: "" }, "x")).toMatchObject({
      port: 8080,
      adminToken: undefined,
    });
  });

  it("parses locations with and without descriptions", () => {
    expect(parseLocations(" home = Home rack , lab,")).toEqual([
      { code: "home", description: "Home rack" },
      { code: "lab", description: "lab" },
    ]);
  });

  it("refuses bad locations, duplicate codes and an empty list", () => {
    expect(() => parseLocations("Upper")).toThrow(/invalid location code/);
    expect(() => parseLocations("a,a")).toThrow(/twice/);
    expect(() => parseLocations(" , ")).toThrow(/at least one/);
  });

  it("names every invalid setting at once", () => {
    expect(() =>
      loadConfig({ SHOAL_PORT: "http", SHOAL_ADMIN_USER: "Root", SHOAL_DB_DOMAIN: "bad domain" }, "x"),
    ).toThrow(/SHOAL_PORT[\s\S]*SHOAL_ADMIN_USER[\s\S]*SHOAL_DB_DOMAIN/);
  });

  it("reads the backup settings into the config, off without SHOAL_BACKUP_URL, and names bad ones with the others", () => {
    expect(loadConfig({}, "x").backup).toBeUndefined();
    const c = loadConfig(
      { SHOAL_BACKUP_URL: "s3://backups/shoal/prod", SHOAL_BACKUP_ENDPOINT: "http://127.0.0.1:9000" },
      "x",
    );
    expect(c.backup).toMatchObject({
      bucket: "backups",
      prefix: "shoal/prod",
      endpoint: "http://127.0.0.1:9000",
      pathStyle: true,
      intervalMs: 1000,
      snapshotIntervalMs: 6 * 3_600_000,
      retentionMs: 168 * 3_600_000,
    });
    expect(() =>
      loadConfig(
        { SHOAL_PORT: "x", SHOAL_BACKUP_URL: "s3://b", SHOAL_BACKUP_RETENTION_HOURS: "forever" },
        "x",
      ),
    ).toThrow(
      /SHOAL_PORT[\s\S]*SHOAL_BACKUP_URL: "b" is not a bucket name[\s\S]*SHOAL_BACKUP_RETENTION_HOURS/,
    );
  });

  it("accepts a database domain with a port, lower-cased", () => {
    expect(loadConfig({ SHOAL_DB_DOMAIN: "DB.Example.com:8443" }, "x").dbDomain).toBe("db.example.com:8443");
  });

  it("reads the node id and the URL other nodes reach this one at, and refuses malformed ones", () => {
    expect(loadConfig({}, "x")).toMatchObject({ nodeId: undefined, nodeUrl: undefined });
    const c = loadConfig({ SHOAL_NODE_ID: "edge-1", SHOAL_NODE_URL: "http://10.0.0.5:8080/" }, "x");
    expect(c).toMatchObject({ nodeId: "edge-1", nodeUrl: "http://10.0.0.5:8080" });
    expect(() => loadConfig({ SHOAL_NODE_ID: "Edge 1", SHOAL_NODE_URL: "10.0.0.5" }, "x")).toThrow(
      /SHOAL_NODE_ID[\s\S]*SHOAL_NODE_URL/,
    );
  });

  it("reads trusted proxies as addresses and CIDR blocks, and names a malformed one", () => {
    expect(loadConfig({}, "x").trustedProxies).toEqual([]);
    expect(loadConfig({ SHOAL_TRUSTED_PROXIES: "10.0.0.0/8, ::1 ,192.0.2.7" }, "x").trustedProxies).toEqual([
      "10.0.0.0/8",
      "::1",
      "192.0.2.7",
    ]);
    expect(() => loadConfig({ SHOAL_TRUSTED_PROXIES: "10.0.0.0/8,proxy.local" }, "x")).toThrow(
      /SHOAL_TRUSTED_PROXIES: "proxy.local" is not an IP address/,
    );
  });

  it("names a bad port and a bad location catalogue together, saying what each accepts", () => {
    expect(() => loadConfig({ SHOAL_PORT: "abc", SHOAL_LOCATIONS: "US East" }, "x")).toThrow(
      /SHOAL_PORT: a whole number from 0 to 65535\n\s+SHOAL_LOCATIONS: invalid location code "US East"/,
    );
    expect(() => loadConfig({ SHOAL_PORT: " " }, "x")).toThrow(/SHOAL_PORT/);
    expect(() => loadConfig({ SHOAL_HISTORY_RETENTION_HOURS: "1.5" }, "x")).not.toThrow();
  });

  it("documents every setting in --help and in the README's settings table", () => {
    const readme = readFileSync(path.resolve(import.meta.dirname, "../README.md"), "utf8");
    const help = usage("1.0.0");
    for (const name of SETTING_NAMES) {
      expect(readme, name).toContain(`| \`${name}\` |`);
      expect(help, name).toMatch(new RegExp(`^  ${name} `, "m"));
    }
  });
});
