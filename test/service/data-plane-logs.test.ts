/**
 * The data plane's log lines: one per request, HTTP and WebSocket, each with the request id its
 * answer carries, and its statements by shape only: arguments and literals never reach the log.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/lib/logger.js";
import { type Shoal, startShoal } from "../../src/main.js";
import { setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { newPostgresDatabase, TEST_STORE, type TestShoal, testConfig } from "../helpers/shoal.js";

const raw: string[] = [];
const lines: Array<Record<string, any>> = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split("\n")) {
      if (!line.trim()) continue;
      raw.push(line);
      lines.push(JSON.parse(line));
    }
    done();
  },
});

let shoal: Shoal;
let dataDir: string;
let db: TestDatabase;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "shoal-test-"));
  const metadataUrl = TEST_STORE === "postgres" ? await newPostgresDatabase() : undefined;
  const config = testConfig(dataDir, { logLevel: "info", metadataUrl });
  shoal = await startShoal(config, { log: createLogger("info", sink), announce: () => {} });
  await shoal.reconciled;
  const h = { url: shoal.url, apiBase: `${shoal.url}/v1/`, dataDir, metadataUrl, shoal } as TestShoal;
  h.adminToken = config.adminToken ?? "";
  db = await setupDatabase(h);
  const c = createClient({ url: db.urls.httpPath, authToken: db.token });
  await c.execute("CREATE TABLE t (a, b)");
  c.close();
});
afterAll(async () => {
  await shoal.close();
  await rm(dataDir, { recursive: true, force: true });
});

const requestLine = (requestId: string) =>
  lines.find((l) => l.requestId === requestId && l.msg === "data plane request");

async function get(pathInDb: string, init: RequestInit = {}): Promise<{ id: string; status: number }> {
  const r = await fetch(`${db.urls.httpPath}${pathInDb}`, {
    ...init,
    headers: { authorization: `Bearer ${db.token}`, ...(init.headers as Record<string, string>) },
  });
  await r.arrayBuffer();
  return { id: r.headers.get("x-request-id")!, status: r.status };
}

describe("data-plane log lines", () => {
  it("log a pipeline with its request id and its statements' shapes, never their values", async () => {
    const r = await fetch(`${db.urls.httpPath}v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${db.token}`, "x-request-id": "dp-log-1" },
      body: JSON.stringify({
        requests: [
          sql("INSERT INTO t VALUES (?, ?)", [
            { type: "text", value: "bound-secret-value" },
            { type: "integer", value: "4815162342" },
          ]),
          sql("INSERT INTO t VALUES ('inline-secret-value', 9876543210123)"),
        ],
      }),
    });
    expect(r.status).toBe(200);
    // The shard serving the database logs it; its lines reach the node's log a moment later.
    await expect.poll(() => requestLine("dp-log-1")).toBeDefined();
    expect(requestLine("dp-log-1")).toMatchObject({
      method: "POST",
      endpoint: "pipeline",
      status: 200,
      statements: ["INSERT INTO t VALUES (?, ?)", "INSERT INTO t VALUES (?, ?)"],
      ms: expect.any(Number),
    });
    for (const secret of [
      "bound-secret-value",
      "4815162342",
      "inline-secret-value",
      "9876543210123",
      db.token,
    ]) {
      expect(raw.filter((l) => l.includes(secret))).toEqual([]);
    }
  });

  it("log every kind of data-plane request, refused ones included, under the id of its answer", async () => {
    const cases: Array<[string, RequestInit, string]> = [
      ["v2", {}, "probe"],
      ["info", {}, "info"],
      ["dump", {}, "dump"],
      ["export", {}, "export"],
      ["sync/1/1/2", {}, "sync-frames"],
      ["export/1", {}, "sync-export"],
      ["pull-updates", { method: "POST", body: "" }, "pull-updates"],
      [
        "v3/cursor",
        { method: "POST", body: JSON.stringify({ baton: null, batch: { steps: [] } }) },
        "cursor",
      ],
      ["nowhere", {}, "other"],
      ["v2/pipeline", { method: "POST", body: "{}", headers: { authorization: "Bearer nope" } }, "pipeline"],
    ];
    for (const [p, init, endpoint] of cases) {
      const { id, status } = await get(p, init);
      expect(id, p).toBeTruthy();
      await expect.poll(() => requestLine(id), { message: p }).toMatchObject({ endpoint, status });
    }
  });

  it("leave the pulls of this node's own replicas (by database id) to the debug level", async () => {
    const r = await fetch(`${shoal.url}/replication/${db.id}/info`, {
      headers: { authorization: `Bearer ${db.token}` },
    });
    await r.arrayBuffer();
    const id = r.headers.get("x-request-id")!;
    expect(id).toBeTruthy();
    // A client's request made after it is logged; the pull, at debug, is not (this logger is at info).
    const after = await get("v2");
    await expect.poll(() => requestLine(after.id)).toBeDefined();
    expect(requestLine(id)).toBeUndefined();
  });

  it("log a WebSocket's opening, each Hrana request and its closing under the id of its upgrade", async () => {
    const c = createClient({ url: db.urls.wsPath, authToken: db.token });
    await c.execute({ sql: "SELECT * FROM t WHERE a = ?", args: ["ws-secret-value"] });
    c.close();
    await expect.poll(() => lines.find((l) => l.msg === "websocket closed")).toBeDefined();
    const opened = lines.find((l) => l.msg === "websocket opened")!;
    const id = opened.requestId as string;
    expect(id).toBeTruthy();
    const mine = lines.filter((l) => l.requestId === id).map((l) => l.msg);
    expect(mine[0]).toBe("websocket opened");
    expect(mine.at(-1)).toBe("websocket closed");
    expect(lines.filter((l) => l.requestId === id && l.msg === "data plane request")).toContainEqual(
      expect.objectContaining({ status: "ok", statements: ["SELECT * FROM t WHERE a = ?"] }),
    );
    expect(raw.filter((l) => l.includes("ws-secret-value"))).toEqual([]);
  });
});
