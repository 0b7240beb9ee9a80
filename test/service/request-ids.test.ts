/**
 * Every answer carries a request id (`X-Request-Id`), the same one is on every log line written
 * while serving it, and a failure of the server's own tells the client only that id. Tokens pasted
 * into a URL are neither logged nor echoed.
 */

import { existsSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createLogger } from "../../src/lib/logger.js";
import { type Shoal, startShoal } from "../../src/main.js";
import { pipeline, setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { createGroup, createUser, type TestUser } from "../helpers/factories.js";
import { instanceFile } from "../helpers/files.js";
import { call } from "../helpers/http.js";
import { newPostgresDatabase, TEST_STORE, type TestShoal, testConfig } from "../helpers/shoal.js";

const lines: Array<Record<string, any>> = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
    done();
  },
});

let shoal: Shoal;
let dataDir: string;
let config: ReturnType<typeof testConfig>;
let h: TestShoal;
let user: TestUser;
let db: TestDatabase;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "shoal-test-"));
  const metadataUrl = TEST_STORE === "postgres" ? await newPostgresDatabase() : undefined;
  config = testConfig(dataDir, { logLevel: "info", metadataUrl });
  shoal = await startShoal(config, { log: createLogger("info", sink), announce: () => {} });
  await shoal.reconciled;
  const base: Omit<TestShoal, "restart" | "close"> = {
    url: shoal.url,
    apiBase: `${shoal.url}/v1/`,
    dataDir,
    metadataUrl,
    adminToken: config.adminToken ?? "",
    shoal,
  };
  h = { ...base, restart: async () => {}, close: async () => {} };
  user = await createUser(h);
  db = await setupDatabase(h, { user });
});
afterAll(async () => {
  await shoal.close();
  await rm(dataDir, { recursive: true, force: true });
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const linesOf = (requestId: string) => lines.filter((l) => l.requestId === requestId);

describe("request ids on the management API", () => {
  it("are on every answer, generated or taken from a sane X-Request-Id, and on the request's log line", async () => {
    const ok = await call(h.url, "GET", "/v1/organizations", { token: user.token });
    const unauthenticated = await call(h.url, "GET", "/v1/organizations");
    const missing = await call(h.url, "GET", "/v1/nowhere", { token: user.token });
    for (const r of [ok, unauthenticated, missing]) {
      const id = r.headers.get("x-request-id")!;
      expect(id).toMatch(UUID);
      expect(linesOf(id).map((l) => l.msg)).toContain("request");
    }
    const traced = await call(h.url, "GET", "/v1/organizations", {
      token: user.token,
      headers: { "x-request-id": "trace-abc.123" },
    });
    expect(traced.headers.get("x-request-id")).toBe("trace-abc.123");
    expect(linesOf("trace-abc.123")[0]).toMatchObject({
      msg: "request",
      status: 200,
      path: "/v1/organizations",
    });
    // One that could forge or flood a log line is replaced.
    for (const bad of ['a "quoted" id', "x".repeat(200)]) {
      const r = await call(h.url, "GET", "/v1/organizations", {
        token: user.token,
        headers: { "x-request-id": bad },
      });
      expect(r.headers.get("x-request-id")).toMatch(UUID);
    }
  });

  it("tell the client of an internal error only its id, which the log line of the cause carries", async () => {
    await createGroup(user, user.username, "fragile", "aws-us-east-2");
    // A plain file where the location's folder should be: creating the database fails inside.
    writeFileSync(path.join(dataDir, "locations", "aws-us-east-2"), "not a folder");
    const r = await user.api.post(`/v1/organizations/${user.username}/databases`, {
      name: "torn",
      group: "fragile",
    });
    expect(r.status).toBe(500);
    const id = r.headers.get("x-request-id")!;
    expect(r.body).toEqual({ error: `internal error (request ${id})` });
    await expect.poll(() => linesOf(id).find((l) => l.level === 50)).toBeDefined();
    const cause = linesOf(id).find((l) => l.level === 50);
    expect(cause).toMatchObject({ msg: "unhandled error", err: { message: expect.any(String) } });
  });
});

describe("request ids on the data plane", () => {
  it("are on every answer over HTTP, and on the 101 of a WebSocket", async () => {
    const ok = await fetch(`${db.urls.httpPath}v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${db.token}`, "x-request-id": "client-7" },
      body: JSON.stringify({ requests: [sql("SELECT 1")] }),
    });
    expect(ok.headers.get("x-request-id")).toBe("client-7");
    const refused = await fetch(`${db.urls.httpPath}v2/pipeline`, { method: "POST", body: "{}" });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("x-request-id")).toMatch(UUID);
    const upgraded = await new Promise<string | undefined>((resolve, reject) => {
      const ws = new WebSocket(db.urls.wsPath, ["hrana3"]);
      ws.once("upgrade", (res) => resolve(res.headers["x-request-id"] as string | undefined));
      ws.once("open", () => ws.close());
      ws.once("error", reject);
    });
    expect(upgraded).toMatch(UUID);
  });

  it("tell the client of an internal error its id, which the log line of the cause carries", async () => {
    const lost = await setupDatabase(h, { user });
    // The file vanished while the server was down (an operator's mistake): exporting it fails inside.
    const port = shoal.port;
    await shoal.close();
    await rm(instanceFile(dataDir, "aws-us-east-1", lost.id));
    shoal = await startShoal({ ...config, port }, { log: createLogger("info", sink), announce: () => {} });
    await shoal.reconciled;
    const r = await fetch(`${lost.urls.httpPath}export/1`, {
      headers: { authorization: `Bearer ${lost.token}` },
    });
    expect(r.status).toBe(500);
    const id = r.headers.get("x-request-id")!;
    expect(id).toMatch(UUID);
    expect(await r.json()).toMatchObject({
      code: "INTERNAL_ERROR",
      message: `internal error (request ${id})`,
    });
    const cause = linesOf(id).find((l) => l.level === 50);
    expect(cause).toMatchObject({
      msg: "data plane request failed",
      path: `/db/${user.username}/${lost.name}/export/1`,
    });
    // Statements on it answer a SQLite error in their result, not a 500.
    const stmt = await pipeline(lost.urls.httpPath, lost.token, { requests: [sql("SELECT 1")] });
    expect(stmt.status).toBe(200);
    expect(stmt.body.results[0].error).toEqual({
      code: "SQLITE_CANTOPEN",
      message: "SQLite error: unable to open database file: it is missing on the server",
    });
    // And no empty database took its place.
    expect(existsSync(instanceFile(dataDir, "aws-us-east-1", lost.id))).toBe(false);
  });
});

describe("a token pasted into a URL", () => {
  it("is neither echoed in the 403 nor written to the request log", async () => {
    const before = lines.length;
    for (const p of [
      `/v1/organizations/${user.token}/databases`,
      `/v1/organizations/${user.username}/databases/${db.token}`,
      `/v1/auth/api-tokens/${user.token}`,
    ]) {
      const r = await call(h.url, p.startsWith("/v1/auth") ? "DELETE" : "GET", p, { token: user.token });
      expect(r.status, p).toBeGreaterThanOrEqual(400);
      expect(r.status, p).toBeLessThan(500);
      expect(r.text, p).not.toContain(user.token);
      expect(r.text, p).not.toContain(db.token);
      expect(r.text, p).toMatch(/looks like a token; send tokens in the Authorization header/);
    }
    const logged = JSON.stringify(lines.slice(before));
    expect(logged).toContain("[redacted]");
    expect(logged).not.toContain(user.token);
    expect(logged).not.toContain(db.token);
    // Nor on the data plane, where the database's name goes.
    const r = await pipeline(`${h.url}/db/${user.username}/${db.token}/`, db.token, {
      requests: [sql("SELECT 1")],
    });
    expect(r.status).toBe(404);
    expect(JSON.stringify(r.body)).not.toContain(db.token);
    const client = createClient({ url: `${h.url}/db/${user.username}/${user.token}/`, authToken: db.token });
    await expect(client.execute("SELECT 1")).rejects.not.toThrow(user.token);
  });
});
