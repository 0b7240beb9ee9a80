/**
 * The cost of encryption at rest in the engine itself: point reads and single-row inserts on a
 * database encrypted with a customer's key (libSQL's aes256cbc, opened with the passphrase Shoal
 * derives) against the same on a plain database, in the same run, as ratios of operations per
 * second. Rounds alternate plain and encrypted so drift on a shared machine hits both alike; each
 * figure is the median round. Also the cost of opening a keyed connection (the engine stretches
 * the passphrase on every open), which is why Shoal keeps keyed connections open while a key is
 * cached, and of the page cipher Shoal runs itself (exports, uploads).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type Database from "libsql";
import { type DatabaseKey, newEncryption } from "../src/engine/encryption/keys.js";
import { openDatabase } from "../src/engine/encryption/open.js";
import { PageCipher } from "../src/engine/encryption/page-cipher.js";
import { type BenchOptions, fmt, table } from "./harness.js";

interface Pair {
  plain: Database.Database;
  encrypted: Database.Database;
}

/** A database of `rows` rows of ~100 bytes, set up as Shoal's pool sets up hosted databases. */
function prepared(file: string, key: DatabaseKey | undefined, rows: number): Database.Database {
  const db = openDatabase(file, key);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  const ins = db.prepare("INSERT INTO t (v) VALUES (?)");
  db.exec("BEGIN");
  for (let i = 0; i < rows; i++) ins.run(randomBytes(50).toString("hex"));
  db.exec("COMMIT");
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  return db;
}

/** Microseconds per operation, wall and CPU, of `n` calls of `op`. */
function measure(n: number, op: (i: number) => void): { wall: number; cpu: number } {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) op(i);
  const wall = ((performance.now() - t0) * 1000) / n;
  const used = process.cpuUsage(cpu0);
  return { wall, cpu: (used.user + used.system) / n };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function encryptionBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-enc-"));
  const rows = opts.quick ? 20_000 : 100_000;
  const rounds = opts.quick ? 3 : 5;
  const n = opts.quick ? 5_000 : 20_000;
  const enc = newEncryption({ cipher: "aes256cbc", key: randomBytes(32) });
  const pair: Pair = {
    plain: prepared(path.join(dir, "plain.db"), undefined, rows),
    encrypted: prepared(path.join(dir, "encrypted.db"), enc.key, rows),
  };
  const ids = Array.from({ length: n }, () => 1 + Math.floor(Math.random() * rows));
  // Reads of rows whose pages the connection holds decrypted, and reads that fetch (and decrypt)
  // a page from the file most of the time.
  const read = (db: Database.Database, cachePages: number, spread: number) => {
    db.exec(`PRAGMA cache_size = ${cachePages}`);
    const stmt = db.prepare("SELECT v FROM t WHERE id = ?").raw(true);
    return (i: number) => stmt.get(1 + (ids[i]! % spread));
  };
  const insert = (db: Database.Database) => {
    const stmt = db.prepare("INSERT INTO t (v) VALUES (?)");
    return () => stmt.run("inserted row of about fifty bytes, like the others");
  };
  const reopen = (file: string, key: DatabaseKey | undefined) => () => openDatabase(file, key).close();
  const cases: Array<{ name: string; count: number; make: (k: keyof Pair) => (i: number) => void }> = [
    { name: "point read, 1,000 hot rows (page cache)", count: n, make: (k) => read(pair[k], 4096, 1000) },
    { name: "point read, any row, 64-page cache", count: n, make: (k) => read(pair[k], 64, rows) },
    { name: "single-row insert (autocommit)", count: n / 4, make: (k) => insert(pair[k]) },
    {
      name: "open + read + close",
      count: opts.quick ? 100 : 300,
      make: (k) => reopen(path.join(dir, `${k}.db`), k === "encrypted" ? enc.key : undefined),
    },
  ];

  const results: Array<Record<string, unknown>> = [];
  const printed: string[][] = [];
  for (const c of cases) {
    type Run = { wall: number; cpu: number };
    const runs: Record<keyof Pair, Run[]> = { plain: [], encrypted: [] };
    const ops = { plain: c.make("plain"), encrypted: c.make("encrypted") };
    for (let r = 0; r < rounds; r++) {
      const order: Array<keyof Pair> = r % 2 === 0 ? ["plain", "encrypted"] : ["encrypted", "plain"];
      for (const k of order) runs[k].push(measure(c.count, ops[k]));
    }
    const wall = {
      plain: median(runs.plain.map((x) => x.wall)),
      encrypted: median(runs.encrypted.map((x) => x.wall)),
    };
    const cpu = {
      plain: median(runs.plain.map((x) => x.cpu)),
      encrypted: median(runs.encrypted.map((x) => x.cpu)),
    };
    const ratio = wall.plain / wall.encrypted;
    const cpuRatio = cpu.plain / cpu.encrypted;
    results.push({
      operation: c.name,
      plainOpsPerSec: 1e6 / wall.plain,
      encryptedOpsPerSec: 1e6 / wall.encrypted,
      ratio,
      cpuRatio,
    });
    printed.push([c.name, fmt(1e6 / wall.plain), fmt(1e6 / wall.encrypted), fmt(ratio, 2), fmt(cpuRatio, 2)]);
  }
  pair.plain.close();
  pair.encrypted.close();

  // Shoal's own page cipher (decrypting for a key holder's export, encrypting an upload).
  const cipher = PageCipher.fromPassphrase(enc.key.passphrase);
  const pages = Buffer.alloc(256 * 4096, 7);
  const codec = measure(rounds * 10, () => cipher.encryptPages(2, pages, 4096));
  const mbPerSec = pages.length / codec.wall;
  await rm(dir, { recursive: true, force: true });

  console.log(
    `\nEncryption at rest in the engine: operations per second, plain vs encrypted (median of ${rounds} rounds)`,
  );
  console.log(
    `(${fmt(rows)} rows of ~100 bytes, WAL, synchronous NORMAL; ratio = encrypted / plain, 1.00 = free)\n`,
  );
  console.log(table(["operation", "plain ops/s", "encrypted ops/s", "ratio", "CPU ratio"], printed));
  console.log(`\nPage cipher in JavaScript (exports, uploads): ${fmt(mbPerSec, 0)} MB/s on one core`);
  return { encryption: results, pageCipherMBps: mbPerSec };
}
