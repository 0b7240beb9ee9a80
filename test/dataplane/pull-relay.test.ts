import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PullRelay } from "../../src/dataplane/forward/pull-relay.js";
import { routeRequest } from "../../src/dataplane/routing.js";
import { mintReplicationToken } from "../../src/domain/data-access/db-tokens.js";
import { DbTokenVerifier } from "../../src/domain/data-access/token-verifier.js";
import { createLogger } from "../../src/lib/logger.js";
import { loadOrCreateSigningKey, type SigningKey } from "../../src/lib/signing-keys.js";
import { within } from "../helpers/nodes.js";

/**
 * A primary's node written at the socket level, so the test decides how it misbehaves: it answers,
 * it accepts connections and reads requests but never answers (a stopped process, a hung machine),
 * or it starts an answer and stops halfway.
 */
type Mood = "answer" | "hang" | "stall";

class RawPrimary {
  mood: Mood = "answer";
  /** Request heads it read, in order. */
  heads: string[] = [];
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((socket) => this.serve(socket));

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    socket.on("error", () => {});
    let pending = "";
    socket.on("data", (chunk) => {
      pending += chunk.toString();
      for (let end = pending.indexOf("\r\n\r\n"); end >= 0; end = pending.indexOf("\r\n\r\n")) {
        const head = pending.slice(0, end);
        pending = pending.slice(end + 4);
        this.heads.push(head);
        if (this.mood === "hang") continue;
        const body = `seen ${head.split(" ")[1]}`;
        if (this.mood === "stall") {
          socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length + 100}\r\n\r\n${body}`);
          continue;
        }
        socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      }
    });
  }
}

const DB = "0b5d1f0e-5b8e-4c8e-9a53-5e1f3f3c1a01";
const OTHER_DB = "0b5d1f0e-5b8e-4c8e-9a53-5e1f3f3c1a02";
const WEST = "aws-eu-west-1";
let keys: string;
let dbTokenKey: SigningKey;
let verifier: DbTokenVerifier;
const log = createLogger("silent");
const clock = () => new Date();
const cleanup: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  keys = await mkdtemp(path.join(tmpdir(), "shoal-relay-"));
  dbTokenKey = await loadOrCreateSigningKey(keys, "db-tokens");
  const apiTokenKey = await loadOrCreateSigningKey(keys, "api-tokens");
  verifier = new DbTokenVerifier({ dbTokenKey, apiTokenKey, clock });
});
afterAll(() => rm(keys, { recursive: true, force: true }));
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A relay on a real HTTP server, routed as Shoal routes `/replication/<db>/...`; and a primary. */
async function setUp(timeoutMs: number): Promise<{ relay: PullRelay; primary: RawPrimary; here: string }> {
  const relay = new PullRelay(verifier, timeoutMs, log);
  const server = http.createServer((req, res) => {
    const route = routeRequest(req.headers.host, req.url ?? "/", "db.test");
    if (!route || !("id" in route.locator)) return res.writeHead(404).end();
    void relay.handle(req, res, route.locator.id, route.path);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const primary = new RawPrimary();
  const primaryUrl = await primary.listen();
  cleanup.push(
    () => primary.close(),
    () => relay.close(),
    () => new Promise<void>((resolve) => server.close(() => resolve())),
    () => server.closeAllConnections(),
  );
  const here = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { relay, primary, here: `${here}${relay.register(DB, WEST, `${primaryUrl}/replication/${DB}`)}` };
}

const pull = async (url: string, token?: string, init: RequestInit = {}) =>
  fetch(url, {
    ...init,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), "x-other": "1" },
  });

/** A GET whose path goes out exactly as written; the answer's status line. */
async function rawGet(url: string, token: string): Promise<string> {
  const u = new URL(url);
  const path = url.slice(url.indexOf("/", "http://".length));
  const socket = net.connect(Number(u.port), u.hostname);
  socket.write(
    `GET ${path} HTTP/1.1\r\nhost: ${u.host}\r\nauthorization: Bearer ${token}\r\nconnection: close\r\n\r\n`,
  );
  let text = "";
  for await (const chunk of socket) text += chunk.toString();
  return text.split("\r\n")[0] ?? "";
}

describe("the pull relay", () => {
  it("sends a replica's pull on to the primary registered for it, with its token and nothing else", async () => {
    const { primary, here } = await setUp(5000);
    const token = await mintReplicationToken({ dbTokenKey, clock }, DB, WEST);
    const res = await pull(`${here}/sync/1/2/3`, token);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`seen /replication/${DB}/sync/1/2/3`);
    expect(primary.heads[0]).toMatch(new RegExp(`authorization: Bearer ${token}`, "i"));
    expect(primary.heads[0]).not.toMatch(/x-other/i);
  });

  it("is no open proxy: only that replica's own token, only GETs, only registered replicas", async () => {
    const { relay, primary, here } = await setUp(5000);
    const token = await mintReplicationToken({ dbTokenKey, clock }, DB, WEST);
    expect((await pull(`${here}/info`)).status).toBe(401);
    const otherLocation = await mintReplicationToken({ dbTokenKey, clock }, DB, "aws-us-east-1");
    expect((await pull(`${here}/info`, otherLocation)).status).toBe(401);
    const otherDb = await mintReplicationToken({ dbTokenKey, clock }, OTHER_DB, WEST);
    expect((await pull(`${here}/info`, otherDb)).status).toBe(401);
    expect((await pull(`${here}/info`, token, { method: "POST" })).status).toBe(405);
    // fetch would resolve `..` itself: sent as written, at the socket level.
    for (const sneaky of [
      "/info/../../../v1/admin",
      "/info/..%2F..%2Fv1",
      "/%2e%2e/%2e%2e/v1/admin",
      "/info.json",
    ])
      expect(await rawGet(`${here}${sneaky}`, token), sneaky).toMatch(/^HTTP\/1\.1 404/);
    relay.cut(DB, WEST);
    const gone = await pull(`${here}/info`, token);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { code: string }).code).toBe("NOT_RELAYED");
    expect(primary.heads).toEqual([]);
  });

  it("ends a pull the primary never answers, then refuses at once until the primary answers a probe", async () => {
    const { primary, here } = await setUp(300);
    const token = await mintReplicationToken({ dbTokenKey, clock }, DB, WEST);
    primary.mood = "hang";
    const first = await pull(`${here}/info`, token);
    expect(first.status).toBe(408);
    expect(((await first.json()) as { code: string }).code).toBe("PRIMARY_NOT_ANSWERING");
    const second = await pull(`${here}/info`, token);
    expect(second.status).toBe(408);
    expect(((await second.json()) as { error: string }).error).toMatch(/hasn't answered for/);
    // The second never reached the primary; only the relay's probes of /health did.
    expect(primary.heads.filter((h) => !h.startsWith("GET /health"))).toHaveLength(1);
    primary.mood = "answer";
    await within(10_000, async () => {
      expect((await pull(`${here}/info`, token)).status).toBe(200);
    });
  });

  it("says why when the primary's node refuses the connection", async () => {
    const { primary, here } = await setUp(5000);
    const token = await mintReplicationToken({ dbTokenKey, clock }, DB, WEST);
    await primary.close();
    const res = await pull(`${here}/info`, token);
    // A 4xx: libSQL's client would retry a 5xx pull five times, sleeping in between.
    expect(res.status).toBe(424);
    expect(await res.json()).toMatchObject({ code: "PRIMARY_UNREACHABLE", error: /ECONNREFUSED/ });
  });

  it("ends a pull whose answer stops halfway", async () => {
    const { primary, here } = await setUp(300);
    const token = await mintReplicationToken({ dbTokenKey, clock }, DB, WEST);
    primary.mood = "stall";
    const res = await pull(`${here}/info`, token);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it("cuts a replica's pull in flight at once", async () => {
    // A limit no test waits for: only the cut can end this pull.
    const { relay, primary, here } = await setUp(600_000);
    const token = await mintReplicationToken({ dbTokenKey, clock }, DB, WEST);
    primary.mood = "hang";
    const pending = pull(`${here}/info`, token);
    await within(5000, async () => {
      expect(primary.heads).toHaveLength(1);
    });
    relay.cut(DB, WEST);
    await expect(pending).rejects.toThrow();
  }, 10_000);
});
