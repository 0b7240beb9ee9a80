import path from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileState } from "../../src/engine/encryption/file-cipher.js";
import { createGroup, createUser, type TestUser, uniqueName } from "../helpers/factories.js";
import { instanceFile } from "../helpers/files.js";
import { openHranaSocket } from "../helpers/hrana-ws.js";
import { filesHoldingText, filesUnderHoldingText } from "../helpers/plaintext.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";
import { createEncrypted, logSink, marker, newKey } from "./helpers.js";

const LOCS = ["aws-us-east-1", "aws-eu-west-1"];
const log = logSink();
let h: TestShoal;
let u: TestUser;
const key = newKey();
const otherKey = newKey();
const secret = marker("secret");
let db: { id: string; token: string; url: string };
let name: string;
const g = (p = "") => `/v1/organizations/${u.username}/groups/sealed${p}`;
const at = (n: string, loc: string) => `${h.url}/db/${u.username}/${n}@${loc}/`;
const locations = () => path.join(h.dataDir, "locations");

/** The file exists, is encrypted, and neither it nor its -wal holds the marker. */
function expectEncrypted(file: string): void {
  expect(fileState(file)).toBe("encrypted");
  expect(filesHoldingText(file, secret)).toEqual([]);
}

async function waitReplicas(): Promise<void> {
  for (const loc of LOCS) expect((await u.api.get(g(`/locations/${loc}/wait`))).status).toBe(200);
}

beforeAll(async () => {
  h = await startTestShoal({ logLevel: "debug" }, { logTo: log.stream });
  u = await createUser(h);
  await createGroup(u, u.username, "sealed", LOCS[0]);
  expect((await u.api.post(g(`/locations/${LOCS[1]}`))).status).toBe(200);
  name = uniqueName("enc");
  db = await createEncrypted(h, u, name, "sealed", key);
  const c = createClient({ url: db.url, authToken: db.token, remoteEncryptionKey: key });
  await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [secret] });
  await waitReplicas();
});
afterAll(() => h?.close());

describe("an encrypted database", () => {
  it("reports its cipher, never its key", async () => {
    const got = await u.api.get(`/v1/organizations/${u.username}/databases/${name}`);
    expect(got.body.database.encryption_cipher).toBe("aes256cbc");
    expect(got.text).not.toContain(key);
    const list = await u.api.get(`/v1/organizations/${u.username}/databases`);
    expect(list.text).not.toContain(key);
  });

  it("reads and writes with the key over HTTP, at the primary and at a replica location", async () => {
    const c = createClient({ url: db.url, authToken: db.token, remoteEncryptionKey: key });
    await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: ["second"] });
    expect((await c.execute("SELECT v FROM t ORDER BY id")).rows.map((r) => r.v)).toEqual([secret, "second"]);
    await waitReplicas();
    const replica = createClient({ url: at(name, LOCS[1]!), authToken: db.token, remoteEncryptionKey: key });
    expect((await replica.execute("SELECT v FROM t ORDER BY id")).rows.map((r) => r.v)).toEqual([
      secret,
      "second",
    ]);
  });

  it("keeps no plaintext in any file: primary, -wal, every replica, frame logs", async () => {
    for (const loc of LOCS) expectEncrypted(instanceFile(h.dataDir, loc, db.id));
    expect(filesUnderHoldingText(locations(), secret)).toEqual([]);
  });

  it("refuses reads and writes without the key or with another key, with errors that say so", async () => {
    for (const url of [db.url, at(name, LOCS[1]!)]) {
      const none = createClient({ url, authToken: db.token });
      await expect(none.execute("SELECT v FROM t")).rejects.toMatchObject({
        code: "ENCRYPTION_KEY_REQUIRED",
        message: expect.stringMatching(/is encrypted.*x-turso-encryption-key/),
      });
      await expect(none.execute("INSERT INTO t (v) VALUES ('x')")).rejects.toMatchObject({
        code: "ENCRYPTION_KEY_REQUIRED",
      });
      const wrong = createClient({ url, authToken: db.token, remoteEncryptionKey: otherKey });
      await expect(wrong.execute("SELECT v FROM t")).rejects.toMatchObject({
        code: "ENCRYPTION_KEY_INVALID",
        message: expect.stringContaining("doesn't open database"),
      });
      await expect(wrong.execute("INSERT INTO t (v) VALUES ('x')")).rejects.toMatchObject({
        code: "ENCRYPTION_KEY_INVALID",
      });
      const bad = createClient({ url, authToken: db.token, remoteEncryptionKey: "not base64!" });
      await expect(bad.execute("SELECT 1")).rejects.toMatchObject({ code: "ENCRYPTION_KEY_MALFORMED" });
    }
    const c = createClient({ url: db.url, authToken: db.token, remoteEncryptionKey: key });
    expect((await c.execute("SELECT count(*) AS n FROM t WHERE v = 'x'")).rows[0]!.n).toBe(0);
  });

  it("tells a WebSocket client it must send the key (which @libsql/client's ws transport can't)", async () => {
    const ws = createClient({ url: db.url.replace("http:", "ws:"), authToken: db.token });
    await expect(ws.execute("SELECT 1")).rejects.toThrow(/encrypted.*https:\/\//);
    ws.close();
  });

  it("serves a WebSocket client that sends the key on the upgrade", async () => {
    const wsUrl = db.url.replace("http:", "ws:").replace(/\/$/, "");
    const sock = await openHranaSocket(wsUrl, ["hrana3"], { "x-turso-encryption-key": key });
    sock.hello(db.token);
    expect((await sock.next((m) => m.type === "hello_ok" || m.type === "hello_error")).type).toBe("hello_ok");
    expect((await sock.request({ type: "open_stream", stream_id: 1 })).type).toBe("response_ok");
    const read = await sock.request({
      type: "execute",
      stream_id: 1,
      stmt: { sql: "SELECT v FROM t ORDER BY id LIMIT 1" },
    });
    expect(read.response.result.rows[0][0]).toMatchObject({ type: "text", value: secret });
    sock.ws.close();
    const wrong = await openHranaSocket(wsUrl, ["hrana3"], { "x-turso-encryption-key": otherKey });
    wrong.hello(db.token);
    const refused = await wrong.next((m) => m.type === "hello_ok" || m.type === "hello_error");
    expect(refused).toMatchObject({ type: "hello_error", error: { code: "ENCRYPTION_KEY_INVALID" } });
  });

  it("refuses a key sent to a plain database", async () => {
    const plain = uniqueName("plain");
    await u.api.post(`/v1/organizations/${u.username}/databases`, { name: plain, group: "sealed" });
    const token = (await u.api.post(`/v1/organizations/${u.username}/databases/${plain}/auth/tokens`)).body
      .jwt;
    const c = createClient({
      url: `${h.url}/db/${u.username}/${plain}/`,
      authToken: token,
      remoteEncryptionKey: key,
    });
    await expect(c.execute("SELECT 1")).rejects.toMatchObject({ code: "DATABASE_NOT_ENCRYPTED" });
  });

  it("branches and restores to a point in time with the key, into encrypted files", async () => {
    const when = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const c = createClient({ url: db.url, authToken: db.token, remoteEncryptionKey: key });
    await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: ["after-restore-point"] });
    const branch = await createEncrypted(h, u, uniqueName("branch"), "sealed", key, {
      type: "database",
      name,
    });
    const pitr = await createEncrypted(h, u, uniqueName("pitr"), "sealed", key, {
      type: "database",
      name,
      timestamp: when,
    });
    await waitReplicas();
    const branchRows = await createClient({
      url: branch.url,
      authToken: branch.token,
      remoteEncryptionKey: key,
    }).execute("SELECT v FROM t ORDER BY id");
    expect(branchRows.rows.map((r) => r.v)).toEqual([secret, "second", "after-restore-point"]);
    const pitrRows = await createClient({
      url: pitr.url,
      authToken: pitr.token,
      remoteEncryptionKey: key,
    }).execute("SELECT v FROM t ORDER BY id");
    expect(pitrRows.rows.map((r) => r.v)).toEqual([secret, "second"]);
    for (const d of [branch, pitr]) {
      for (const loc of LOCS) expectEncrypted(instanceFile(h.dataDir, loc, d.id));
      await expect(
        createClient({ url: d.url, authToken: d.token }).execute("SELECT 1"),
      ).rejects.toMatchObject({ code: "ENCRYPTION_KEY_REQUIRED" });
    }
    expect(filesUnderHoldingText(locations(), secret)).toEqual([]);
  });

  it("refuses a branch without the source's key, or with another key, and changes nothing", async () => {
    const before = (await u.api.get(`/v1/organizations/${u.username}/databases`)).body.databases.length;
    const without = await u.api.post(`/v1/organizations/${u.username}/databases`, {
      name: uniqueName("nokey"),
      group: "sealed",
      seed: { type: "database", name },
    });
    expect(without.status).toBe(400);
    expect(without.body.error).toMatch(/is encrypted: a branch/);
    const other = await u.api.post(`/v1/organizations/${u.username}/databases`, {
      name: uniqueName("otherkey"),
      group: "sealed",
      seed: { type: "database", name },
      remote_encryption: { encryption_key: otherKey },
    });
    expect(other.status).toBe(403);
    expect(other.text).not.toContain(otherKey);
    expect((await u.api.get(`/v1/organizations/${u.username}/databases`)).body.databases.length).toBe(before);
  });

  it("keeps everything readable with the key after a restart", async () => {
    await h.restart();
    const c = createClient({ url: db.url, authToken: db.token, remoteEncryptionKey: key });
    expect((await c.execute("SELECT v FROM t ORDER BY id")).rows[0]!.v).toBe(secret);
    await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: ["after-restart"] });
    await waitReplicas();
    const replica = createClient({ url: at(name, LOCS[1]!), authToken: db.token, remoteEncryptionKey: key });
    expect((await replica.execute("SELECT v FROM t ORDER BY id")).rows.map((r) => r.v)).toContain(
      "after-restart",
    );
    expect(filesUnderHoldingText(locations(), "after-restart")).toEqual([]);
  });

  it("never writes a key to a log line", () => {
    const text = log.text();
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain(key);
    expect(text).not.toContain(otherKey);
  });
});
