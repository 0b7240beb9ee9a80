import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliHarness } from "../helpers/cli.js";
import { startTestS3, type TestS3 } from "../helpers/s3-server.js";

let s3: TestS3;
let h: CliHarness;

/** Waits until `shoal admin backup status` says the bucket has everything of `name`. */
async function shipped(name: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const s = await h.json<any>(["admin", "backup", "status"]);
    const d = s.databases.find((x: { name: string }) => x.name === name);
    if (d && d.frame !== null && d.delay_ms === 0) return;
    if (Date.now() > deadline) throw new Error(`not shipped: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  s3 = await startTestS3();
  h = await CliHarness.start({
    SHOAL_BACKUP_URL: `s3://${s3.bucket}/cli`,
    SHOAL_BACKUP_ENDPOINT: s3.endpoint,
    SHOAL_BACKUP_ACCESS_KEY_ID: "S3RVER",
    SHOAL_BACKUP_SECRET_ACCESS_KEY: "S3RVER",
    SHOAL_BACKUP_INTERVAL_MS: "200",
  });
}, 90_000);
afterAll(async () => {
  await h?.close();
  await s3?.close();
});

describe("shoal admin backup", () => {
  it("shows the status, lists restorable points and restores a database to a moment", async () => {
    await h.ok(["db", "create", "notes"]);
    await h.ok(["db", "shell", "notes"], {
      input: "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('kept');\n",
    });
    await shipped("notes");
    const status = await h.ok(["admin", "backup", "status"]);
    expect(status).toMatch(/ships to s3:\/\/shoal-backups\/cli every 200 ms/);
    expect(status).toMatch(/^ORGANIZATION\s+DATABASE\s+LOCATION\s+SHIPPED\s+DELAY\s+FAILURES\s+ERROR$/m);
    expect(status).toMatch(/^admin\s+notes\s+\S+\s+\d+\/\d+\s+0\.0 s\s+0\s*$/m);

    await new Promise((r) => setTimeout(r, 20));
    const moment = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await h.ok(["db", "shell", "notes"], { input: "INSERT INTO t VALUES ('later');\n" });
    await shipped("notes");

    const list = await h.ok(["admin", "backup", "list", "notes"]);
    expect(list).toMatch(/^Restorable from \d{4}-\S+ to \d{4}-\S+ \(generation \d+ frame \d+\)/);
    expect(list).toMatch(/^SNAPSHOT\s+AS OF$/m);
    const points = await h.json(["admin", "backup", "list", "notes"]);
    expect(points).toMatchObject({ database: "notes", snapshots: expect.any(Array) });

    // Without a terminal, a restore must be confirmed with --yes.
    const refused = await h.fails(["admin", "backup", "restore", "notes", "--timestamp", moment]);
    expect(refused).toContain("not confirmed");
    const out = await h.ok(["admin", "backup", "restore", "notes", "--timestamp", moment, "--yes"]);
    expect(out).toMatch(/^Restored notes to generation \d+ frame \d+ \(last commit \S+\) in \d+\.\d s\.$/m);
    const rows = await h.ok(["db", "shell", "notes"], { input: "SELECT v FROM t;\n" });
    expect(rows).toContain("kept");
    expect(rows).not.toContain("later");

    const bad = await h.fails(["admin", "backup", "restore", "notes", "--timestamp", "soon", "--yes"]);
    expect(bad).toContain('invalid timestamp: parsing time "soon"');
    expect(await h.fails(["admin", "backup", "list", "nope"])).toContain("database nope not found");
    expect(await h.ok(["admin", "backup", "restore-missing"])).toBe("No database of this node is missing.\n");
    expect(await h.json(["admin", "backup", "restore-missing"])).toEqual({ databases: [] });
  }, 60_000);
});
