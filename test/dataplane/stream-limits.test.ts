import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openHranaSocket } from "../helpers/hrana-ws.js";
import {
  descriptorsOf,
  type ServerProcess,
  startServerProcess,
  type Tenant,
  tenant,
} from "../helpers/isolation.js";

/**
 * Streams cost a connection (and its file descriptors) each for as long as they stay open, so a
 * client opening them without end is stopped at the documented limits, other tenants still get
 * theirs, and what the attacker held is given back when it goes. The server runs with 512 open
 * files: its budget is then 64 connections, and one database may hold at most half of them.
 */
const PER_SOCKET = 20;
const PER_DATABASE = 32;

let server: ServerProcess;
let a: Tenant;

beforeAll(async () => {
  server = await startServerProcess(
    { SHOAL_MAX_STREAMS_PER_WEBSOCKET: String(PER_SOCKET), SHOAL_MAX_CONNECTIONS: "8" },
    512,
  );
  a = await tenant(server, "CREATE TABLE t (v TEXT)");
}, 120_000);

afterAll(async () => {
  await server?.close();
});

/** Opens `n` streams on one socket, each holding a transaction with a read; the answers in order. */
async function openStreams(url: string, token: string, n: number) {
  const s = await openHranaSocket(url);
  s.hello(token);
  const answers = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const opened = await s.request({ type: "open_stream", stream_id: i + 1 });
      if (opened.type !== "response_ok") return opened;
      return s.request({
        type: "batch",
        stream_id: i + 1,
        batch: { steps: [{ stmt: { sql: "BEGIN" } }, { stmt: { sql: "SELECT count(*) FROM t" } }] },
      });
    }),
  );
  return { socket: s, answers };
}

describe("streams opened without end", () => {
  it("stop at the documented limits with a clear error; other tenants' databases still open; descriptors come back", async () => {
    const before = descriptorsOf(server.pid, a.id);
    // One socket: stopped at the limit per WebSocket.
    const first = await openStreams(a.ws, a.token, 100);
    const ok = (xs: typeof first.answers) => xs.filter((x) => x.type === "response_ok").length;
    expect(ok(first.answers)).toBe(PER_SOCKET);
    const refused = first.answers[PER_SOCKET]!;
    expect(refused.error.code).toBe("STREAMS_TOO_MANY");
    expect(refused.error.message).toContain(`${PER_SOCKET} streams`);
    expect(refused.error.message).toContain("SHOAL_MAX_STREAMS_PER_WEBSOCKET");
    // More sockets on the same database: stopped at the limit per database.
    const more = [await openStreams(a.ws, a.token, 100), await openStreams(a.ws, a.token, 100)];
    expect(ok(more[0]!.answers) + ok(more[1]!.answers)).toBe(PER_DATABASE - PER_SOCKET);
    const perDatabase = more[1]!.answers.find((x) => x.type !== "response_ok");
    expect(perDatabase.error.code).toBe("STREAMS_TOO_MANY");
    expect(perDatabase.error.message).toContain("SHOAL_MAX_STREAMS_PER_DATABASE");
    const during = descriptorsOf(server.pid, a.id);

    // Tenant B's database, never opened before, opens and answers meanwhile.
    const b = await tenant(server);
    const cb = b.client();
    await cb.execute("CREATE TABLE kv (k TEXT)");
    await cb.execute({ sql: "INSERT INTO kv VALUES (?)", args: ["b"] });
    expect((await cb.execute("SELECT count(*) AS n FROM kv")).rows[0]!.n).toBe(1);
    cb.close();

    // The attacker goes: its transactions end and its connections close, every descriptor with
    // them (SQLite holds those of closed connections until the file's last one closes).
    for (const x of [first, ...more]) x.socket.ws.close();
    await Promise.all([first, ...more].map((x) => x.socket.closed));
    const kept = before;
    let after = descriptorsOf(server.pid, a.id);
    for (let i = 0; i < 100 && after > kept; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = descriptorsOf(server.pid, a.id);
    }
    console.log(`descriptors on A's files: ${before} before, ${during} during the attack, ${after} after`);
    expect(during).toBeGreaterThanOrEqual(before + PER_DATABASE);
    expect(after).toBeLessThanOrEqual(kept);
    // A's database works again for a well-behaved client.
    const ca = a.client();
    expect((await ca.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(0);
    ca.close();
  });
});
