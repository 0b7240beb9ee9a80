import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scanWal } from "../../src/engine/wal.js";
import { WalIndex } from "../../src/engine/wal-index.js";

let dir: string;
let file: string;
let db: Database.Database;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-walindex-"));
  file = path.join(dir, "db.db");
  db = new Database(file);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (v BLOB)");
});
afterEach(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

/** What scanning the WAL finds, in the index's terms. */
function scanned() {
  const s = scanWal(`${file}-wal`);
  return s && { committed: s.committed, salt1: s.header.salt1, salt2: s.header.salt2 };
}

describe("the wal-index header", () => {
  it("gives the committed frames and salts a scan of the WAL finds, across rollbacks and checkpoints", () => {
    const index = new WalIndex(`${file}-shm`);
    expect(index.read()).toEqual(scanned());
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 40; i++) {
        // Single-page, multi-page and rolled-back transactions.
        if (i % 7 === 0) {
          db.exec("BEGIN; INSERT INTO t VALUES (randomblob(20000)); ROLLBACK");
        } else if (i % 5 === 0) {
          db.exec("BEGIN; INSERT INTO t SELECT randomblob(3000) FROM t LIMIT 5; COMMIT");
        } else db.exec(`INSERT INTO t VALUES ('row ${i}')`);
        expect(index.read()).toEqual(scanned());
      }
      const [busy] = db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").raw(true).get() as number[];
      expect(busy).toBe(0);
      // An empty WAL: the index says no frame, a scan finds no header; callers then scan.
      expect(index.read()?.committed ?? 0).toBe(0);
      db.exec("INSERT INTO t VALUES ('after')");
      expect(index.read()).toEqual(scanned());
    }
    index.close();
  });

  it("says nothing once the file is gone, and reads the new one when it comes back", () => {
    const index = new WalIndex(`${file}-shm`);
    db.exec("INSERT INTO t VALUES ('a')");
    expect(index.read()?.committed).toBeGreaterThan(0);
    // The last connection's close checkpoints and deletes the WAL and the index.
    db.close();
    expect(index.read()).toBeUndefined();
    db = new Database(file);
    db.exec("PRAGMA wal_autocheckpoint = 0");
    db.exec("INSERT INTO t VALUES ('b')");
    expect(index.read()).toEqual(scanned());
    index.close();
  });
});
