/**
 * A full disk, as a user meets it: the data folder on a small real filesystem (a tmpfs this test
 * mounts, so it needs root; skipped with the reason otherwise), filled by a file beside Shoal's.
 * Below the reserve, writes that grow a database are refused with DISK_RESERVE_REACHED while
 * reads, DELETE, DROP and VACUUM run and another tenant reads on; creates get 507, never 500;
 * once space is freed everything works again without a restart. With no reserve, the disk
 * really fills: a write SQLite can't make is an error and absent, a create is a 507.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Client, createClient, LibsqlError } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { instanceFile } from "../helpers/files.js";
import { scrape } from "../helpers/metrics.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

const MB = 1024 * 1024;

/** Mounts a tmpfs of `sizeMb` at a new folder, or says why it can't. */
function mountSmallDisk(sizeMb: number): { dir: string } | { why: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "shoal-small-disk-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMb}m,mode=0700`, "tmpfs", dir], {
      stdio: "pipe",
    });
    return { dir };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim();
    return { why: stderr || (e as Error).message };
  }
}

function unmount(dir: string): void {
  try {
    execFileSync("umount", ["-l", dir], { stdio: "pipe" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const free = (dir: string) => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};

/** Fills `dir`'s filesystem with a file until `leave` bytes are free (0: as full as it gets). */
function fill(dir: string, leave: number): string {
  const file = path.join(dir, "ballast");
  const chunk = Buffer.alloc(MB, 1);
  writeFileSync(file, "");
  for (let left = free(dir) - leave; left > 0; left = free(dir) - leave) {
    try {
      writeFileSync(file, left >= MB ? chunk : chunk.subarray(0, left), { flag: "a" });
    } catch {
      break;
    }
  }
  return file;
}

async function eventually(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`never happened: ${what}`);
}

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    if (e instanceof LibsqlError) return e.code;
    throw e;
  }
}

const disk = process.getuid?.() === 0 ? mountSmallDisk(1) : { why: "not running as root" };
if ("dir" in disk) unmount(disk.dir);
const why = "why" in disk ? `needs root and a mountable tmpfs (${disk.why})` : undefined;
if (why) console.warn(`test/hosting/disk-full.test.ts skipped: ${why}`);

describe.skipIf(why !== undefined)("the data folder's disk fills up", () => {
  describe("below the reserve", () => {
    let mount: string;
    let h: TestShoal;
    let a: TestDatabase;
    let b: TestDatabase;
    let ca: Client;
    let cb: Client;
    let ballast: string;
    const answered: number[] = [];

    beforeAll(async () => {
      const m = mountSmallDisk(128);
      if (!("dir" in m)) throw new Error(m.why);
      mount = m.dir;
      const dataDir = path.join(mount, "data");
      mkdirSync(dataDir, { mode: 0o700 });
      h = await startTestShoal({ dataDir, diskReserveMb: 32 });
      a = await setupDatabase(h);
      b = await setupDatabase(h, { user: a.user });
      ca = createClient({ url: a.urls.httpPath, authToken: a.token });
      cb = createClient({ url: b.urls.httpPath, authToken: b.token });
      await ca.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, v BLOB)");
      await cb.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, v TEXT)");
      await cb.execute("INSERT INTO notes (v) VALUES ('the neighbour''s row')");
      for (let i = 0; i < 4; i++) {
        const r = await ca.execute("INSERT INTO blobs (v) VALUES (randomblob(1000000))");
        answered.push(Number(r.lastInsertRowid));
      }
      ballast = fill(mount, 24 * MB);
    });
    afterAll(async () => {
      ca?.close();
      cb?.close();
      await h?.close();
      if (mount) unmount(mount);
    });

    it("refuses a write that grows a database with DISK_RESERVE_REACHED, and writes nothing", async () => {
      let code: string | undefined;
      await eventually(async () => {
        code = await codeOf(
          ca.execute("INSERT INTO blobs (v) VALUES (randomblob(1000000))").then((r) => {
            answered.push(Number(r.lastInsertRowid));
          }),
        );
        return code !== undefined;
      }, "a write refused at the reserve");
      expect(code).toBe("DISK_RESERVE_REACHED");
      const rows = await ca.execute("SELECT id FROM blobs ORDER BY id");
      expect(rows.rows.map((r) => Number(r.id))).toEqual(answered);
      const message = await ca
        .execute("UPDATE blobs SET v = randomblob(10) WHERE id = 1")
        .catch((e: Error) => e.message);
      expect(message).toMatch(/SHOAL_DISK_RESERVE_MB/);
    });

    it("still answers the other tenant's reads, and the metrics show it", async () => {
      const r = await cb.execute("SELECT v FROM notes");
      expect(r.rows[0]!.v).toBe("the neighbour's row");
      const s = await scrape(h.url, h.adminToken);
      expect(s.value("shoal_disk_free_bytes")).toBeLessThan(32 * MB);
      expect(s.value("shoal_disk_reserve_bytes")).toBe(32 * MB);
      expect(s.series("shoal_history_bytes").length).toBeGreaterThan(0);
    });

    it("lets a tenant get out: DELETE, DROP and VACUUM run at the reserve", async () => {
      const deleted = await ca.execute("DELETE FROM blobs WHERE id = ?", [answered[0]!]);
      expect(deleted.rowsAffected).toBe(1);
      await ca.execute("DROP TABLE blobs");
      await ca.execute("VACUUM");
      const tables = await ca.execute("SELECT name FROM sqlite_schema WHERE name = 'blobs'");
      expect(tables.rows.length).toBe(0);
    });

    it("answers a create at the reserve with 507 DISK_RESERVE_REACHED, not 500", async () => {
      const r = await a.user.api.post(`/v1/organizations/${a.org}/databases`, {
        name: "no-room",
        group: "default",
      });
      expect(r.status, r.text).toBe(507);
      expect(r.body.code).toBe("DISK_RESERVE_REACHED");
      expect(r.body.error).toMatch(/SHOAL_DISK_RESERVE_MB/);
      const listed = await a.user.api.get(`/v1/organizations/${a.org}/databases`);
      expect(listed.body.databases.map((d: { Name: string }) => d.Name)).not.toContain("no-room");
    });

    it("works again, without a restart, once space is freed", async () => {
      rmSync(ballast);
      await eventually(
        async () => (await codeOf(ca.execute("CREATE TABLE again (v BLOB)"))) === undefined,
        "writes accepted again",
      );
      await ca.execute("INSERT INTO again (v) VALUES (randomblob(1000000))");
      const r = await a.user.api.post(`/v1/organizations/${a.org}/databases`, {
        name: "room-again",
        group: "default",
      });
      expect(r.status, r.text).toBe(200);
    });
  });

  it("gives history way first: below the reserve, archived generations go down to each database's newest", async () => {
    const m = mountSmallDisk(192);
    if (!("dir" in m)) throw new Error(m.why);
    const dataDir = path.join(m.dir, "data");
    mkdirSync(dataDir, { mode: 0o700 });
    const h = await startTestShoal({ dataDir, diskReserveMb: 32 });
    try {
      const db = await setupDatabase(h);
      const c = createClient({ url: db.urls.httpPath, authToken: db.token });
      const logDir = `${instanceFile(dataDir, "aws-us-east-1", db.id)}.log`;
      const archives = () => readdirSync(logDir).filter((f) => /^\d+\.frames$/.test(f)).length;
      await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)");
      // Two generations of some 4,300 pages each, ended by the small commits after them.
      for (const want of [1, 2]) {
        await c.execute("INSERT INTO t (v) SELECT randomblob(3900) FROM generate_series(1, 4300)");
        await eventually(async () => {
          await c.execute("INSERT INTO t (v) VALUES (1)");
          return archives() >= want;
        }, `generation ${want} archived`);
      }
      const rows = Number((await c.execute("SELECT count(*) AS n FROM t")).rows[0]!.n);
      const ballast = fill(m.dir, 24 * MB);
      await eventually(async () => archives() === 1, "history pruned to the newest generation", 20_000);
      // Live data is untouched, and reads go on.
      expect(Number((await c.execute("SELECT count(*) AS n FROM t")).rows[0]!.n)).toBe(rows);
      rmSync(ballast);
      c.close();
    } finally {
      await h.close();
      unmount(m.dir);
    }
  });

  describe("with no reserve, all the way to full", () => {
    let mount: string;
    let h: TestShoal;
    let a: TestDatabase;
    let ca: Client;
    let ballast: string;

    beforeAll(async () => {
      const m = mountSmallDisk(96);
      if (!("dir" in m)) throw new Error(m.why);
      mount = m.dir;
      const dataDir = path.join(mount, "data");
      mkdirSync(dataDir, { mode: 0o700 });
      h = await startTestShoal({ dataDir, diskReserveMb: 0 });
      a = await setupDatabase(h);
      ca = createClient({ url: a.urls.httpPath, authToken: a.token });
      await ca.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, v BLOB)");
      ballast = fill(mount, 0);
    });
    afterAll(async () => {
      ca?.close();
      await h?.close();
      if (mount) unmount(mount);
    });

    it("answers a write that can't be made with SQLite's error, and it isn't there", async () => {
      const code = await codeOf(ca.execute("INSERT INTO blobs (v) VALUES (randomblob(4000000))"));
      expect(code).toBe("SQLITE_FULL");
      const n = await ca.execute("SELECT count(*) AS n FROM blobs");
      expect(Number(n.rows[0]!.n)).toBe(0);
    });

    it("answers a create with 507, not 500", async () => {
      const r = await a.user.api.post(`/v1/organizations/${a.org}/databases`, {
        name: "full",
        group: "default",
      });
      expect(r.status, r.text).toBe(507);
      expect(["DISK_FULL", "DISK_RESERVE_REACHED"]).toContain(r.body.code);
    });

    it("works again once space is freed", async () => {
      rmSync(ballast);
      const r = await ca.execute("INSERT INTO blobs (v) VALUES (randomblob(4000000))");
      expect(r.rowsAffected).toBe(1);
      const created = await a.user.api.post(`/v1/organizations/${a.org}/databases`, {
        name: "full-again",
        group: "default",
      });
      expect(created.status, created.text).toBe(200);
    });
  });
});
