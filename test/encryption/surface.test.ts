import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient, type LibsqlError } from "@libsql/client";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileState } from "../../src/engine/encryption/file-cipher.js";
import { ENCRYPTED_QUERY_LABEL } from "../../src/hosting/usage-meter.js";
import { createGroup, createUser, type TestUser, uniqueName } from "../helpers/factories.js";
import { instanceFile } from "../helpers/files.js";
import { scrape } from "../helpers/metrics.js";
import { filesHoldingText } from "../helpers/plaintext.js";
import { replicaClient } from "../helpers/replica-client.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";
import { createEncrypted, marker, newKey } from "./helpers.js";

let h: TestShoal;
let u: TestUser;
let scratch: string;
const key = newKey();
const secret = marker("hidden");
let db: { id: string; token: string; url: string };
let name: string;
const dbs = (p = "") => `/v1/organizations/${u.username}/databases${p}`;

beforeAll(async () => {
  h = await startTestShoal({ usageFlushIntervalMs: 50 });
  u = await createUser(h);
  await createGroup(u, u.username, "default");
  scratch = await mkdtemp(path.join(tmpdir(), "shoal-enc-"));
  name = uniqueName("enc");
  db = await createEncrypted(h, u, name, "default", key);
  const c = createClient({ url: db.url, authToken: db.token, remoteEncryptionKey: key });
  await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [secret] });
});
afterAll(async () => {
  await h?.close();
  await rm(scratch, { recursive: true, force: true });
});

describe("remote_encryption on create", () => {
  const create = (extra: Record<string, unknown>) =>
    u.api.post(dbs(), { name: uniqueName("bad"), group: "default", ...extra });

  it("refuses Turso's ciphers, unknown ones, and bad keys with 400s that name the field, never the key", async () => {
    const k = newKey();
    const gcm = await create({ remote_encryption: { encryption_key: k, encryption_cipher: "aes256gcm" } });
    expect(gcm.status).toBe(400);
    expect(gcm.body.error).toMatch(/encryption_cipher aes256gcm is not supported.*supported: aes256cbc/);
    const odd = await create({ remote_encryption: { encryption_key: k, encryption_cipher: "rot13" } });
    expect(odd.body.error).toMatch(/unknown; supported: aes256cbc/);
    const short = newKey().slice(0, 24);
    const len = await create({ remote_encryption: { encryption_key: short } });
    expect(len.status).toBe(400);
    expect(len.body.error).toMatch(/must decode to 32 bytes for aes256cbc; it decodes to 18/);
    const b64 = await create({ remote_encryption: { encryption_key: "%%%not-base64%%%" } });
    expect(b64.status).toBe(400);
    expect(b64.body.error).toMatch(/not standard base64/);
    const none = await create({ remote_encryption: {} });
    expect(none.body.error).toMatch(/encryption_key is required/);
    const notObject = await create({ remote_encryption: "yes" });
    expect(notObject.status).toBe(400);
    for (const r of [gcm, odd, len, b64]) expect(r.text).not.toContain(k);
    expect(len.text).not.toContain(short);
  });

  it("takes aes256cbc as the default cipher", async () => {
    const n = uniqueName("default-cipher");
    const r = await u.api.post(dbs(), {
      name: n,
      group: "default",
      remote_encryption: { encryption_key: newKey() },
    });
    expect(r.status, r.text).toBe(200);
    expect((await u.api.get(dbs(`/${n}`))).body.database.encryption_cipher).toBe("aes256cbc");
  });

  it("refuses encryption for schema databases and their followers", async () => {
    const r = await create({ is_schema: true, remote_encryption: { encryption_key: newKey() } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/can't be used with is_schema or schema/);
  });

  it("keeps plain databases without encryption_cipher", async () => {
    const n = uniqueName("plain");
    expect((await u.api.post(dbs(), { name: n, group: "default" })).status).toBe(200);
    expect((await u.api.get(dbs(`/${n}`))).body.database).not.toHaveProperty("encryption_cipher");
  });

  it("encrypts a branch of a plain database when asked", async () => {
    const plain = uniqueName("plainsrc");
    expect((await u.api.post(dbs(), { name: plain, group: "default" })).status).toBe(200);
    const t = (await u.api.post(dbs(`/${plain}/auth/tokens`))).body.jwt;
    const pc = createClient({ url: `${h.url}/db/${u.username}/${plain}/`, authToken: t });
    const words = marker("plainword");
    await pc.execute("CREATE TABLE w (v TEXT)");
    await pc.execute({ sql: "INSERT INTO w VALUES (?)", args: [words] });
    const k = newKey();
    const branch = await createEncrypted(h, u, uniqueName("sealedbranch"), "default", k, {
      type: "database",
      name: plain,
    });
    const bc = createClient({ url: branch.url, authToken: branch.token, remoteEncryptionKey: k });
    expect((await bc.execute("SELECT v FROM w")).rows[0]!.v).toBe(words);
    const file = instanceFile(h.dataDir, "aws-us-east-1", branch.id);
    expect(fileState(file)).toBe("encrypted");
    expect(filesHoldingText(file, words)).toEqual([]);
  });
});

describe("the rest of the data plane with the key", () => {
  const get = (p: string, k?: string) =>
    fetch(`${db.url}${p}`, {
      headers: { authorization: `Bearer ${db.token}`, ...(k ? { "x-turso-encryption-key": k } : {}) },
    });

  it("serves /dump and /export in plain text to the key holder only", async () => {
    expect((await get("dump")).status).toBe(401);
    expect((await get("export")).status).toBe(401);
    expect((await get("dump", newKey())).status).toBe(403);
    const gcm = await fetch(`${db.url}dump`, {
      headers: {
        authorization: `Bearer ${db.token}`,
        "x-turso-encryption-key": key,
        "x-turso-encryption-cipher": "aes256gcm",
      },
    });
    expect(gcm.status).toBe(400);
    expect(await gcm.text()).toMatch(/not the cipher of database .*aes256cbc/);
    const dump = await get("dump", key);
    expect(dump.status).toBe(200);
    expect(await dump.text()).toContain(secret);
    const exported = await get("export", key);
    expect(exported.status).toBe(200);
    const file = path.join(scratch, "exported.db");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(file, Buffer.from(await exported.arrayBuffer()));
    const plain = new Database(file, { readonly: true });
    expect(plain.prepare("SELECT v FROM t").raw(true).all()).toEqual([[secret]]);
    plain.close();
  });

  it("syncs an app's embedded replica (libsql with remoteEncryptionKey) with the key, not without", async () => {
    const app = replicaClient();
    try {
      await app.open(path.join(scratch, "app.db"), db.url, db.token, { remoteEncryptionKey: key });
      await app.sync();
      expect(await app.query("SELECT v FROM t")).toEqual([[secret]]);
    } finally {
      await app.terminate();
    }
    const keyless = replicaClient();
    try {
      await expect(
        (async () => {
          await keyless.open(path.join(scratch, "keyless.db"), db.url, db.token);
          await keyless.sync();
        })(),
      ).rejects.toThrow(/encrypted/);
    } finally {
      await keyless.terminate();
    }
  });

  it("refuses ATTACH, allow_attach and the cipher's SQL functions", async () => {
    const c = createClient({ url: db.url, authToken: db.token, remoteEncryptionKey: key });
    await expect(c.execute("ATTACH 'other' AS o")).rejects.toThrow(/ATTACH is not available.*encrypted/);
    await expect(c.execute("SELECT sqlite3mc_config('kdf_iter')")).rejects.toThrow(
      /changes the connection's encryption/,
    );
    const r = await u.api.patch(dbs(`/${name}/configuration`), { allow_attach: true });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/allow_attach can't be turned on.*encrypted/);
    expect((await c.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(1);
  });

  it("keeps no statement text of an encrypted database in query statistics", async () => {
    const c = createClient({ url: db.url, authToken: db.token, remoteEncryptionKey: key });
    await c.execute({ sql: `SELECT v FROM t WHERE v != '${marker("literal")}'`, args: [] });
    await new Promise((r) => setTimeout(r, 300));
    const stats = await u.api.get(dbs(`/${name}/stats`));
    expect(stats.status).toBe(200);
    expect(stats.text).not.toContain(secret);
    expect(stats.text).not.toContain("literal-");
    expect(stats.text).toContain(ENCRYPTED_QUERY_LABEL);
  });

  it("encrypts an uploaded file with the key; the upload needs the key", async () => {
    const n = uniqueName("upl");
    const k = newKey();
    const r = await u.api.post(dbs(), {
      name: n,
      group: "default",
      seed: { type: "database_upload" },
      remote_encryption: { encryption_key: k },
    });
    expect(r.status, r.text).toBe(200);
    const token = (await u.api.post(dbs(`/${n}/auth/tokens`))).body.jwt;
    const words = marker("uploaded");
    const local = path.join(scratch, "upload.db");
    const src = new Database(local);
    src.exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;");
    src.exec(`CREATE TABLE up (v TEXT); INSERT INTO up VALUES ('${words}');`);
    src.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    src.close();
    const { readFileSync } = await import("node:fs");
    const body = readFileSync(local);
    const url = `${h.url}/db/${u.username}/${n}/v1/upload`;
    const send = (headers: Record<string, string>) =>
      fetch(url, { method: "POST", headers: { authorization: `Bearer ${token}`, ...headers }, body });
    expect((await send({})).status).toBe(401);
    const ok = await send({ "x-turso-encryption-key": k });
    expect(ok.status, await ok.clone().text()).toBe(200);
    const id = (await u.api.get(dbs(`/${n}`))).body.database.DbId;
    const file = instanceFile(h.dataDir, "aws-us-east-1", id);
    expect(fileState(file)).toBe("encrypted");
    expect(filesHoldingText(file, words)).toEqual([]);
    const c = createClient({
      url: `${h.url}/db/${u.username}/${n}/`,
      authToken: token,
      remoteEncryptionKey: k,
    });
    expect((await c.execute("SELECT v FROM up")).rows[0]!.v).toBe(words);
  });
});

describe("wrong keys are limited per database and address", () => {
  it("refuses keys unchecked with 429 ENCRYPTION_KEY_ATTEMPTS after 10 wrong ones within a minute, and counts both", async () => {
    const guessedName = uniqueName("guessed");
    const right = newKey();
    const guessed = await createEncrypted(h, u, guessedName, "default", right);
    const codeWith = async (k: string) => {
      const c = createClient({ url: guessed.url, authToken: guessed.token, remoteEncryptionKey: k });
      try {
        await c.execute("SELECT 1");
        return "ok";
      } catch (e) {
        return (e as LibsqlError).code;
      } finally {
        c.close();
      }
    };
    for (let i = 0; i < 10; i++) expect(await codeWith(newKey())).toBe("ENCRYPTION_KEY_INVALID");
    expect(await codeWith(newKey())).toBe("ENCRYPTION_KEY_ATTEMPTS");
    // The right key too: past the limit nothing is checked, so a guesser learns nothing.
    expect(await codeWith(right)).toBe("ENCRYPTION_KEY_ATTEMPTS");
    const raw = await fetch(`${guessed.url}v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${guessed.token}`, "x-turso-encryption-key": right },
      body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql: "SELECT 1" } }] }),
    });
    expect(raw.status).toBe(429);
    expect(((await raw.json()) as { message: string }).message).toMatch(
      /too many wrong encryption keys .* try again in \d+ s/,
    );
    // Other databases, and the key of one in use, are not affected.
    const c = createClient({ url: db.url, authToken: db.token, remoteEncryptionKey: key });
    expect((await c.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBeGreaterThan(0);
    c.close();
    const s = await scrape(h.url, h.adminToken);
    expect(s.value("shoal_encryption_key_refusals_total", { reason: "invalid" })).toBeGreaterThanOrEqual(10);
    expect(s.value("shoal_encryption_key_refusals_total", { reason: "attempts" })).toBeGreaterThanOrEqual(3);
  });
});
