/**
 * WebSocket input the protocol forbids, sent byte by byte over a raw socket: each closes that one
 * connection and nothing else. Before, ws reported such a frame as an "error" event on the socket
 * that nothing listened to, and one frame of six bytes, sent before `hello`, ended the shard
 * process and every database on it.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipeline, setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { scrape } from "../helpers/metrics.js";
import { ADMIN_TOKEN, startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
});
afterAll(() => h.close());

const upgradeRequest = (path: string, host: string, protocols = "hrana3") =>
  `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
  `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n` +
  `Sec-WebSocket-Protocol: ${protocols}\r\n\r\n`;

/**
 * Sends `first`, then `then` once an answer's head has arrived; resolves with everything read
 * and whether the server closed the connection (within 5 s).
 */
function exchange(first: string, then: Buffer | string): Promise<{ text: string; closed: boolean }> {
  const u = new URL(db.urls.wsPath);
  return new Promise((resolve) => {
    const s = connect(Number(u.port), u.hostname);
    let text = "";
    let sent = false;
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ text, closed: false });
    }, 5000);
    s.on("data", (d) => {
      text += d.toString("latin1");
      if (!sent && text.includes("\r\n\r\n")) {
        sent = true;
        s.write(then);
      }
    });
    s.on("error", () => {});
    s.on("close", () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    s.write(first);
  });
}

async function crashedShards(): Promise<number> {
  const metrics = await scrape(h.url, ADMIN_TOKEN);
  return metrics.value("shoal_shard_restarts_total", { reason: "crashed" });
}

async function stillServes(): Promise<void> {
  const r = await pipeline(db.urls.httpPath, db.token, {
    requests: [{ type: "execute", stmt: { sql: "SELECT 1" } }],
  });
  expect(r.status).toBe(200);
}

// Client frames, masked with zeros (so the payload reads as written) unless the case says not.
const mask = [0x80, 0, 0, 0, 0];
const FRAMES: Array<[string, Buffer]> = [
  ["a reserved opcode", Buffer.from([0x83, ...mask])],
  ["an unmasked frame", Buffer.from([0x81, 0x02, 0x68, 0x69])],
  ["text that isn't UTF-8", Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0xff, 0xfe])],
  ["a close with a code no one may send", Buffer.from([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe7])],
  [
    "a length past the 16 MiB limit",
    Buffer.concat([Buffer.from([0x82, 0xff]), Buffer.from([0, 0, 0, 0, 0x01, 0x10, 0, 0]), Buffer.alloc(4)]),
  ],
];

describe("a WebSocket frame the protocol forbids", () => {
  for (const [what, frame] of FRAMES) {
    it(`(${what}) closes its own connection, and the process goes on serving`, async () => {
      const u = new URL(db.urls.wsPath);
      const before = await crashedShards();
      const r = await exchange(upgradeRequest(u.pathname, u.host), frame);
      expect(r.text).toMatch(/^HTTP\/1\.1 101 /);
      expect(r.closed).toBe(true);
      await stillServes();
      expect(await crashedShards()).toBe(before);
    });
  }
});

describe("an upgrade offering a subprotocol twice", () => {
  it("is refused 400 as ws's server refuses it, also when it reaches the database's process through another", async () => {
    const u = new URL(db.urls.wsPath);
    const direct = await exchange(upgradeRequest(u.pathname, u.host, "hrana3, hrana3"), "");
    expect(direct.text).toMatch(/^HTTP\/1\.1 400 /);
    // A kept-alive connection whose first request was the management API's is served by the main
    // process, which passes the upgrade on: the WebSocket client it opens threw on such a list.
    const hopped = await exchange(
      `GET /v1/locations HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`,
      upgradeRequest(u.pathname, u.host, "hrana3, hrana3"),
    );
    expect(hopped.text).toContain("HTTP/1.1 400 Bad Request");
    expect(hopped.text).toContain("Invalid Sec-WebSocket-Protocol header");
    await stillServes();
  });
});
