import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGroup, createUser, type TestUser, uniqueName } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";
import { createEncrypted, newKey } from "./helpers.js";

let h: TestShoal;
let u: TestUser;

beforeAll(async () => {
  h = await startTestShoal({ encryptionKeyIdleSeconds: 0 });
  u = await createUser(h);
  await createGroup(u, u.username, "default");
});
afterAll(() => h?.close());

describe("SHOAL_ENCRYPTION_KEY_IDLE_SECONDS=0", () => {
  it("keeps no key and no keyed connection between requests, and still serves every request", async () => {
    const key = newKey();
    const db = await createEncrypted(h, u, uniqueName("nocache"), "default", key);
    const c = createClient({ url: db.url, authToken: db.token, remoteEncryptionKey: key });
    await c.execute("CREATE TABLE t (v TEXT)");
    for (let i = 0; i < 3; i++) await c.execute({ sql: "INSERT INTO t VALUES (?)", args: [`row ${i}`] });
    expect((await c.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(3);
    await new Promise((r) => setTimeout(r, 50));
    expect(await h.shoal.deps.shards.keyCount()).toBe(0);
    expect((await h.shoal.deps.shards.stats()).open).toBe(0);
    const wrong = createClient({ url: db.url, authToken: db.token, remoteEncryptionKey: newKey() });
    await expect(wrong.execute("SELECT 1")).rejects.toMatchObject({ code: "ENCRYPTION_KEY_INVALID" });
  });
});
