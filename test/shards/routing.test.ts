import http from "node:http";
import net from "node:net";
import { Writable } from "node:stream";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownerOf } from "../../src/shards/ownership.js";
import { setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { resolveToLoopback } from "../helpers/loopback-dns.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

/**
 * Which process serves what: each database by the shard owning it, whatever connection its
 * request came on, and the management API by the node's primary process. The node's log says
 * which shard served each data-plane request (`"shard": n`).
 */
const SHARDS = 2;
const lines: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
    done();
  },
});

let h: TestShoal;
/** Databases on each shard, two each. */
const on: TestDatabase[][] = [[], []];

beforeAll(async () => {
  resolveToLoopback(".shoal.test");
  h = await startTestShoal({ logLevel: "info", workers: SHARDS, headersTimeoutMs: 2000 }, { logTo: sink });
  const first = await setupDatabase(h);
  on[ownerOf(first.id, SHARDS)]!.push(first);
  while (on[0]!.length < 2 || on[1]!.length < 2) {
    const db = await setupDatabase(h, { user: first.user });
    if (on[ownerOf(db.id, SHARDS)]!.length < 2) on[ownerOf(db.id, SHARDS)]!.push(db);
  }
}, 60_000);
afterAll(() => h?.close());

/** The shard that logged the data-plane request with this id, once its line arrived. */
async function servedBy(requestId: string): Promise<unknown> {
  await expect
    .poll(() => lines.find((l) => l.requestId === requestId && l.msg === "data plane request"))
    .toBeDefined();
  return lines.find((l) => l.requestId === requestId && l.msg === "data plane request")!.shard;
}

/** One request on `agent` (whose single socket is reused), with its request id; answers the socket it went on. */
function request(
  agent: http.Agent,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; id: string },
): Promise<{ status: number; body: string; socket: net.Socket; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { agent, method: init.method ?? "GET", headers: { ...init.headers, "x-request-id": init.id } },
      (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () =>
          resolve({ status: res.statusCode!, body, socket: req.socket!, headers: res.headers }),
        );
      },
    );
    req.on("error", reject);
    req.end(init.body);
  });
}

const pipelineBody = JSON.stringify({ requests: [sql("SELECT 1 AS one")] });

describe("a node's shards", () => {
  it("serve each database in the shard owning it, over HTTP and WebSocket, by path and by hostname", async () => {
    for (const index of [0, 1]) {
      for (const db of on[index]!) {
        const id = `owner-${db.id}`;
        const r = await fetch(`${db.urls.httpPath}v2/pipeline`, {
          method: "POST",
          headers: { authorization: `Bearer ${db.token}`, "x-request-id": id },
          body: pipelineBody,
        });
        expect(r.status).toBe(200);
        expect(await servedBy(id)).toBe(index);
        const ws = createClient({ url: db.urls.wsHost, authToken: db.token });
        expect((await ws.execute("SELECT 2 AS two")).rows[0]!.two).toBe(2);
        ws.close();
      }
    }
    const wsLines = lines.filter((l) => l.msg === "websocket opened");
    expect(new Set(wsLines.map((l) => l.shard))).toEqual(new Set([0, 1]));
  });

  it("send on what arrives on one kept-alive connection for another shard's database, or for the management API", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<net.Socket>();
    const plan = [on[0]![0]!, on[1]![0]!, "api", on[1]![1]!, on[0]![1]!, "api", on[0]![0]!] as const;
    for (const [i, target] of plan.entries()) {
      const id = `mixed-${i}-${Date.now()}`;
      if (target === "api") {
        const r = await request(agent, `${h.url}/v1/organizations`, {
          id,
          headers: { authorization: `Bearer ${h.adminToken}` },
        });
        expect(r.status).toBe(200);
        expect(JSON.parse(r.body)).toBeInstanceOf(Array);
        sockets.add(r.socket);
        continue;
      }
      const r = await request(agent, `${target.urls.httpPath}v2/pipeline`, {
        id,
        method: "POST",
        headers: { authorization: `Bearer ${target.token}` },
        body: pipelineBody,
      });
      expect(r.status, r.body).toBe(200);
      expect(JSON.parse(r.body).results[0].response.result.rows).toEqual([[{ type: "integer", value: "1" }]]);
      // Sent on inside the node, not to another node: nothing says "served by".
      expect(r.headers["x-shoal-served-by"]).toBeUndefined();
      expect(await servedBy(id)).toBe(ownerOf(target.id, SHARDS));
      sockets.add(r.socket);
    }
    // All of it on one connection.
    expect(sockets.size).toBe(1);
    agent.destroy();
  });

  it("route a connection whose first request head arrives in pieces, and answer pipelined requests in order", async () => {
    const db = on[1]![0]!;
    const head = (id: string) =>
      `POST /db/${db.org}/${db.name}/v2/pipeline HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer ${db.token}\r\nX-Request-Id: ${id}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(pipelineBody)}\r\n\r\n${pipelineBody}`;
    const port = new URL(h.url).port;
    const socket = net.connect(Number(port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    await new Promise((r) => socket.once("connect", r));
    const first = head("piece-1");
    // The head in three writes, apart in time: the node waits for all of it before choosing a shard.
    for (const part of [first.slice(0, 10), first.slice(10, 60), first.slice(60) + head("piece-2")]) {
      socket.write(part);
      await new Promise((r) => setTimeout(r, 50));
    }
    await expect.poll(() => answer.match(/HTTP\/1\.1 200/g)?.length ?? 0).toBe(2);
    socket.destroy();
    expect(await servedBy("piece-1")).toBe(1);
    expect(await servedBy("piece-2")).toBe(1);
  });

  it("answer a first request head past 16 KiB with 431, and a connection that sends no head in time with 408", async () => {
    const port = Number(new URL(h.url).port);
    const big = await rawExchange(
      port,
      `GET /v1/organizations HTTP/1.1\r\nHost: x\r\nX-Pad: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
    const silent = await rawExchange(port, "GET / HTTP/1.1\r\n", 6000);
    expect(silent).toMatch(/^HTTP\/1\.1 408 /);
  });
});

/** Sends `text` on a fresh connection and answers whatever comes back before the node closes it. */
function rawExchange(port: number, text: string, waitMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let answer = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${waitMs} ms; got ${JSON.stringify(answer)}`));
    }, waitMs);
    socket.on("data", (d) => (answer += d));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.on("error", () => undefined);
    socket.write(text);
  });
}
