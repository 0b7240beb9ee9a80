/**
 * An encrypted database (`remote_encryption`) backed up and restored through a real `shoal`
 * process and a real S3-compatible server: its pages ship as they are on disk (ciphertext; the
 * node has no key to check them with, so the objects' checksums are the check), and a restore to an earlier
 * moment gives back exactly the earlier rows, readable with the key and still encrypted on disk.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client } from "../helpers/http.js";
import { filesUnderHoldingText } from "../helpers/plaintext.js";
import { type ShoalProcess, spawnShoal } from "../helpers/process.js";
import { startTestS3, type TestS3 } from "../helpers/s3-server.js";
import { ADMIN_TOKEN } from "../helpers/shoal.js";

let s3: TestS3;
let dir: string;
let node: ShoalProcess | undefined;

beforeAll(async () => {
  s3 = await startTestS3();
  dir = await mkdtemp(path.join(tmpdir(), "shoal-backup-enc-"));
}, 60_000);

afterAll(async () => {
  node?.proc.kill("SIGKILL");
  await node?.exited;
  await s3?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("backups of an encrypted database", () => {
  it("ships ciphertext and restores an earlier moment that reads with the key", async () => {
    node = await spawnShoal({
      SHOAL_DATA_DIR: dir,
      SHOAL_ADMIN_TOKEN: ADMIN_TOKEN,
      SHOAL_BACKUP_URL: `s3://${s3.bucket}/enc`,
      SHOAL_BACKUP_ENDPOINT: s3.endpoint,
      SHOAL_BACKUP_ACCESS_KEY_ID: "S3RVER",
      SHOAL_BACKUP_SECRET_ACCESS_KEY: "S3RVER",
      SHOAL_BACKUP_INTERVAL_MS: "200",
    });
    const admin = client(node.url, ADMIN_TOKEN);
    const key = randomBytes(32).toString("base64");
    const secret = `secret-${randomBytes(8).toString("hex")}`;
    expect(
      (await admin.post("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" }))
        .status,
    ).toBe(200);
    const created = await admin.post("/v1/organizations/admin/databases", {
      name: "vault",
      group: "default",
      remote_encryption: { encryption_key: key, encryption_cipher: "aes256cbc" },
    });
    expect(created.status).toBe(200);
    const jwt = (await admin.post("/v1/organizations/admin/databases/vault/auth/tokens")).body.jwt as string;
    const sql = createClient({
      url: `${node.url}/db/admin/vault/`,
      authToken: jwt,
      remoteEncryptionKey: key,
    });
    await sql.execute("CREATE TABLE t (v TEXT)");
    for (let i = 0; i < 20; i++)
      await sql.execute({ sql: "INSERT INTO t VALUES (?)", args: [`${secret}-${i}`] });
    await shipped(admin, "vault");
    await new Promise((r) => setTimeout(r, 20));
    const middle = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await sql.execute({ sql: "INSERT INTO t VALUES (?)", args: [`${secret}-late`] });
    await shipped(admin, "vault");

    const restored = await admin.post("/v1/admin/backups/admin/vault/restore", { timestamp: middle });
    expect(restored.status).toBe(200);
    const rows = (await sql.execute("SELECT v FROM t ORDER BY rowid")).rows.map((r) => String(r.v));
    expect(rows).toEqual(Array.from({ length: 20 }, (_, i) => `${secret}-${i}`));
    sql.close();

    // Without the key the restored database still refuses, and the restored files hold no plaintext.
    const keyless = createClient({ url: `${node.url}/db/admin/vault/`, authToken: jwt });
    await expect(keyless.execute("SELECT count(*) FROM t")).rejects.toThrow(/encrypt/i);
    keyless.close();
    expect(filesUnderHoldingText(dir, secret)).toEqual([]);
  });
});

/** Waits until the node says the bucket has everything of `name` committed so far. */
async function shipped(admin: ReturnType<typeof client>, name: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const s = (await admin.get("/v1/admin/backups")).body as {
      databases: Array<{ name: string; frame: number | null; delay_ms: number }>;
    };
    const d = s.databases.find((x) => x.name === name);
    if (d && d.frame !== null && d.delay_ms === 0) return;
    if (Date.now() > deadline) throw new Error(`not shipped: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
