import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EncryptionKeyError, type KeyProblem } from "../../../src/engine/encryption/errors.js";
import { fileState } from "../../../src/engine/encryption/file-cipher.js";
import { type DatabaseKey, newEncryption } from "../../../src/engine/encryption/keys.js";
import { openDatabase, openReplicaReader } from "../../../src/engine/encryption/open.js";
import { HostedDatabases } from "../../../src/engine/hosted-databases.js";
import { InstanceFiles } from "../../../src/engine/instance-files.js";
import { filesHoldingText } from "../../helpers/plaintext.js";

let dir: string;
let enc: string;
let plain: string;
let key: DatabaseKey;
let other: DatabaseKey;
const MARKER = `plaintext-${randomBytes(8).toString("hex")}`;

const newKey = () => newEncryption({ cipher: "aes256cbc", key: randomBytes(32) }).key;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-open-"));
  enc = path.join(dir, "enc.db");
  plain = path.join(dir, "plain.db");
  key = newKey();
  other = newKey();
  for (const [file, k] of [
    [enc, key],
    [plain, undefined],
  ] as const) {
    const db = openDatabase(file, k);
    db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (v TEXT)");
    db.prepare("INSERT INTO t VALUES (?)").run([MARKER]);
    db.close();
  }
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function problem(fn: () => unknown): KeyProblem | string {
  try {
    fn();
  } catch (e) {
    return e instanceof EncryptionKeyError ? e.problem : `other: ${(e as Error).message}`;
  }
  return "opened";
}

describe("opening an encrypted database with the engine", () => {
  it("creates and reopens it with its key, keeping the plaintext off the disk", () => {
    expect(fileState(enc)).toBe("encrypted");
    expect(fileState(plain)).toBe("plain");
    const db = openDatabase(enc, key);
    db.exec("PRAGMA wal_autocheckpoint = 0");
    db.prepare("INSERT INTO t VALUES (?)").run([`${MARKER}-in-wal`]);
    // The WAL holds the new row's page, encrypted.
    expect(readFileSync(`${enc}-wal`).length).toBeGreaterThan(0);
    expect(filesHoldingText(enc, MARKER)).toEqual([]);
    expect(db.prepare("SELECT count(*) FROM t").raw(true).get()).toEqual([2]);
    db.close();
    expect(filesHoldingText(enc, MARKER)).toEqual([]);
    // The plain database is what the helper catches (in its file or its WAL, as the engine left it).
    expect(filesHoldingText(plain, MARKER).length).toBeGreaterThan(0);
  });

  it("reports a missing key as required, another key as invalid, and a key on a plain file as not encrypted", () => {
    expect(problem(() => openDatabase(enc))).toBe("required");
    expect(problem(() => openDatabase(enc, other))).toBe("invalid");
    expect(problem(() => openDatabase(plain, key))).toBe("not-encrypted");
    expect(problem(() => openDatabase(plain).close())).toBe("opened");
  });

  it("leaves a damaged file the engine's own error, with or without a key", () => {
    const junk = path.join(dir, "junk.db");
    writeFileSync(junk, randomBytes(8192));
    expect(fileState(junk)).toBe("unknown");
    expect(problem(() => openDatabase(junk))).toMatch(/^other: file is not a database/);
    expect(problem(() => openDatabase(junk, key))).toMatch(/^other: file is not a database/);
  });

  it("opens replica readers that can't write", () => {
    const r = openReplicaReader(enc, key);
    expect(r.prepare("SELECT v FROM t").raw(true).get()).toEqual([MARKER]);
    expect(() => r.exec("INSERT INTO t VALUES ('no')")).toThrow(/readonly/);
    r.close();
  });
});

describe("the connection pool with encrypted databases", () => {
  it("opens with the key, maps key failures, and never hands a connection to another key", async () => {
    const pool = new HostedDatabases({ maxOpen: 8, synchronous: "NORMAL" }, new InstanceFiles(dir));
    expect(problem(() => pool.at(enc).checkout())).toBe("required");
    expect(problem(() => pool.at(enc).checkout(other))).toBe("invalid");
    expect(problem(() => pool.at(plain).checkout(key))).toBe("not-encrypted");
    expect(pool.stats()).toMatchObject({ open: 0, inUse: 0 });

    const a = pool.at(enc).checkout(key);
    expect((await a.execute(a.prepare("SELECT v FROM t"), [], { wantRows: true })).rows).toEqual([[MARKER]]);
    pool.at(a.path).checkin(a);
    // The same key gets the idle connection back.
    const b = pool.at(enc).checkout(key);
    expect(b).toBe(a);
    pool.at(b.path).checkin(b);
    // An equal key object (verified again after the cache dropped it) carries the same check.
    const c = pool.at(enc).checkout({ ...key });
    expect(c).toBe(a);
    pool.at(c.path).checkin(c);
    // Another key (or none) never gets it: the idle keyed connection closes instead.
    expect(problem(() => pool.at(enc).checkout(other))).toBe("invalid");
    expect(a.isClosed).toBe(true);
    expect(pool.stats()).toMatchObject({ open: 0 });

    // A plain database's idle connection isn't handed to a request carrying a key either.
    const p = pool.at(plain).checkout();
    pool.at(p.path).checkin(p);
    expect(problem(() => pool.at(plain).checkout(key))).toBe("not-encrypted");
    expect(p.isClosed).toBe(true);
    await pool.closeAll();
    expect(filesHoldingText(enc, MARKER)).toEqual([]);
  });
});

describe("a wrong key never damages an encrypted database", () => {
  it("leaves a database whose WAL holds frames whole when the pool is handed a wrong key", async () => {
    // Rows left in the WAL by a process that ended without closing (a crash copy of its files).
    const live = openDatabase(enc, key);
    live.exec("PRAGMA wal_autocheckpoint = 0");
    for (let i = 0; i < 50; i++)
      live.prepare("INSERT INTO t VALUES (?)").run([`row ${i} ${"x".repeat(500)}`]);
    const copy = path.join(dir, "crashed.db");
    writeFileSync(copy, readFileSync(enc));
    writeFileSync(`${copy}-wal`, readFileSync(`${enc}-wal`));
    live.close();
    expect(readFileSync(`${copy}-wal`).length).toBeGreaterThan(0);
    const before = readFileSync(copy);
    const pool = new HostedDatabases({ maxOpen: 8, synchronous: "NORMAL" }, new InstanceFiles(dir));
    // A key for another database, as if the request-level check had been passed by mistake.
    expect(problem(() => pool.at(copy).checkout(other))).toBe("invalid");
    expect(problem(() => pool.at(copy).checkout(other))).toBe("invalid");
    await pool.closeAll();
    expect(readFileSync(copy).equals(before)).toBe(true);
    const db = openDatabase(copy, key);
    expect(db.prepare("SELECT count(*) FROM t").raw(true).get()).toEqual([51]);
    expect(db.prepare("PRAGMA integrity_check").raw(true).get()).toEqual(["ok"]);
    db.close();
  });
});
