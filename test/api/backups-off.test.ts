import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let s: TestShoal;
let admin: Client;

beforeAll(async () => {
  s = await startTestShoal();
  admin = client(s.url, s.adminToken);
});
afterAll(() => s.close());

describe("backup routes without SHOAL_BACKUP_URL", () => {
  it("says backups are off, and refuses restores with 409 backups_off", async () => {
    const status = await admin.get("/v1/admin/backups");
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ enabled: false, bucket: null, delay_ms: 0, databases: [] });
    expect(s.shoal.deps.backups).toBeUndefined();
    for (const r of [
      await admin.get("/v1/admin/backups/admin/db"),
      await admin.post("/v1/admin/backups/admin/db/restore", {}),
      await admin.post("/v1/admin/backups/restore-missing", {}),
    ]) {
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({ code: "backups_off" });
      expect(r.body.error).toMatch(/^backups are off on this node: set SHOAL_BACKUP_URL/);
    }
  });

  it("answers only the instance administrator", async () => {
    expect((await client(s.url, null).get("/v1/admin/backups")).status).toBe(401);
    const user = await admin.post("/v1/admin/users", { username: "plain", email: "plain@example.com" });
    const other = client(s.url, user.body.token as string);
    expect((await other.get("/v1/admin/backups")).status).toBe(403);
    expect((await other.post("/v1/admin/backups/restore-missing", {})).status).toBe(403);
  });
});
