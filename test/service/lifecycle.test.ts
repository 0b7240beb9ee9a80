import { mkdtemp, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, client } from "../helpers/http.js";
import {
  killAndRemove,
  runShoalExpectingFailure,
  type ShoalProcess,
  spawnShoal,
} from "../helpers/process.js";

let dataDir: string;
let running: ShoalProcess | undefined;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "shoal-life-"));
});
afterEach(async () => {
  await killAndRemove(running, dataDir);
  running = undefined;
});

const base = () => ({ SHOAL_DATA_DIR: dataDir, SHOAL_LOG_LEVEL: "info" });

describe("starting and stopping the service", () => {
  it("creates the administrator on first start, prints its token once and saves it with mode 0600", async () => {
    running = await spawnShoal(base());
    const printed = /saved to .*admin-token:\n\n {2}(\S+)\n/.exec(running.output())?.[1];
    expect(printed).toBeDefined();
    const file = path.join(dataDir, "admin-token");
    expect((await readFile(file, "utf8")).trim()).toBe(printed);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const health = await call(running.url, "GET", "/health");
    expect(health.status).toBe(200);
    const orgs = await call(running.url, "GET", "/v1/organizations", { token: printed });
    expect(orgs.body).toEqual([expect.objectContaining({ slug: "admin", type: "personal" })]);
    // Nothing secret reaches the logs other than the one-time banner.
    const logs = running
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"));
    expect(logs.join("\n")).not.toContain(printed);
  });

  it("prints the first-start token as a framed block on stderr, apart from the JSON log lines on stdout", async () => {
    running = await spawnShoal(base());
    const token = (await readFile(path.join(dataDir, "admin-token"), "utf8")).trim();
    const rule = "=".repeat(72);
    const block = new RegExp(`\\n${rule}\\n([\\s\\S]*?)\\n${rule}\\n`).exec(running.stderr());
    expect(block?.[1]).toContain(`Shoal created the instance administrator "admin".`);
    expect(block?.[1]).toContain(`\n\n  ${token}\n\n`);
    // stdout is JSON lines only, and none of them holds the token.
    const lines = running
      .stdout()
      .split("\n")
      .filter((l) => l !== "");
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(() => JSON.parse(line), line).not.toThrow();
      expect(line).not.toContain(token);
    }
    expect(lines.some((l) => JSON.parse(l).msg === "created the instance administrator")).toBe(true);
    // The token works: it is the administrator's.
    expect((await call(running.url, "GET", "/metrics", { token })).status).toBe(200);
  });

  it("keeps every change across a restart and does not print a token again", async () => {
    running = await spawnShoal(base());
    const token = (await readFile(path.join(dataDir, "admin-token"), "utf8")).trim();
    const api = client(running.url, token);
    expect(
      (await api.post("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" }))
        .status,
    ).toBe(200);
    const db = (await api.post("/v1/organizations/admin/databases", { name: "kept", group: "default" })).body
      .database;
    expect((await api.post("/v1/organizations/admin/groups/default/locations/aws-eu-west-1")).status).toBe(
      200,
    );
    expect((await api.patch("/v1/organizations/admin", { overages: true })).status).toBe(200);
    const bob = await api.post("/v1/admin/users", { username: "bob", email: "bob@example.com" });
    running.proc.kill("SIGTERM");
    expect(await running.exited).toBe(0);

    running = await spawnShoal(base());
    expect(running.output()).not.toContain("admin-token:");
    const again = client(running.url, token);
    const got = await again.get("/v1/organizations/admin/databases/kept");
    expect(got.body.database).toMatchObject({ DbId: db.DbId, regions: ["aws-us-east-1", "aws-eu-west-1"] });
    expect((await again.get("/v1/organizations/admin")).body.organization.overages).toBe(true);
    expect((await call(running.url, "GET", "/v1/organizations", { token: bob.body.token })).status).toBe(200);
  });

  it("uses SHOAL_ADMIN_TOKEN when set, without printing or saving it", async () => {
    const token = "operator-chosen-token-1234567890";
    running = await spawnShoal({ ...base(), SHOAL_ADMIN_TOKEN: token, SHOAL_ADMIN_USER: "root" });
    expect(running.output()).not.toContain(token);
    await expect(stat(path.join(dataDir, "admin-token"))).rejects.toThrow();
    const orgs = await call(running.url, "GET", "/v1/organizations", { token });
    expect(orgs.body[0].slug).toBe("root");
  });

  it("reads SHOAL_LOCATIONS and SHOAL_DB_DOMAIN", async () => {
    const token = "operator-chosen-token-1234567890";
    running = await spawnShoal({
      ...base(),
      SHOAL_ADMIN_TOKEN: token,
      SHOAL_LOCATIONS: "home=Home rack,lab",
      SHOAL_DB_DOMAIN: "db.example.com",
    });
    const locs = await call(running.url, "GET", "/v1/locations");
    expect(locs.body).toEqual({ locations: { home: "Home rack", lab: "lab" } });
    const api = client(running.url, token);
    await api.post("/v1/organizations/admin/groups", { name: "default", location: "home" });
    const db = await api.post("/v1/organizations/admin/databases", { name: "x", group: "default" });
    expect(db.body.database.Hostname).toBe("x-admin.db.example.com");
    expect((await api.post("/v1/organizations/admin/groups/default/locations/aws-us-east-1")).status).toBe(
      400,
    );
  });

  it("shuts down cleanly on SIGTERM even with a keep-alive connection open", async () => {
    running = await spawnShoal(base());
    const token = (await readFile(path.join(dataDir, "admin-token"), "utf8")).trim();
    // fetch keeps this connection alive afterwards; shutdown must not wait for it to time out.
    expect((await call(running.url, "GET", "/v1/organizations", { token })).status).toBe(200);
    running.proc.kill("SIGTERM");
    expect(await running.exited).toBe(0);
    expect(running.output()).toContain('"msg":"shutting down"');
  });

  it("refuses to start with invalid settings, naming them", async () => {
    const r = await runShoalExpectingFailure({
      ...base(),
      SHOAL_PORT: "99999",
      SHOAL_LOCATIONS: "Bad Code",
      SHOAL_ADMIN_TOKEN: "short",
    });
    expect(r.code).toBe(2);
    expect(r.output).toContain("SHOAL_PORT");
    expect(r.output).toContain("SHOAL_ADMIN_TOKEN");
    const locs = await runShoalExpectingFailure({ ...base(), SHOAL_LOCATIONS: "Bad Code" });
    expect(locs.code).toBe(2);
    expect(locs.output).toContain("invalid location code");
  });
});
