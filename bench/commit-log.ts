/**
 * The frame log's cost on a commit (issue 12, item 4): single-row inserts on a WAL database,
 * alone (the baseline), followed by what the frame log did after each commit before issue 12
 * (scan the new WAL frame headers, append the commit time by opening the commits file), and by
 * what `FrameLog.afterCommit` does now (read the wal-index header, append on a kept descriptor).
 * Same process, rounds alternating, best median of the rounds.
 */
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { FrameLog } from "../src/engine/frame-log.js";
import { scanWal } from "../src/engine/wal.js";
import { type BenchOptions, fmt, table } from "./harness.js";

interface Scratch {
  dir: string;
  file: string;
  db: Database.Database;
  insert: Database.Statement;
}

function scratch(): Scratch {
  const dir = mkdtempSync(path.join(tmpdir(), "shoal-bench-commit-"));
  const file = path.join(dir, "db.db");
  const db = new Database(file);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0");
  db.exec("CREATE TABLE log (id INTEGER PRIMARY KEY, v TEXT)");
  return { dir, file, db, insert: db.prepare("INSERT INTO log (v) VALUES (?)") };
}

/** The median microseconds of `n` inserts, each followed by `after`. */
function median(n: number, after: (s: Scratch) => (() => void) | undefined): number {
  const s = scratch();
  const step = after(s);
  const us: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      s.insert.run(`row ${i}`);
      step?.();
      us.push((performance.now() - t) * 1000);
    }
  } finally {
    s.db.close();
    rmSync(s.dir, { recursive: true, force: true });
  }
  return us.sort((a, b) => a - b)[n >> 1]!;
}

/** What the frame log did after each commit before: scan from the last known frame, open-append-close. */
function scanAndAppend(s: Scratch): () => void {
  let known = 0;
  let salts: { salt1: number; salt2: number } | undefined;
  const commits = path.join(s.dir, "commits");
  return () => {
    const scan = scanWal(`${s.file}-wal`, known, salts);
    known = scan?.committed ?? 0;
    salts = scan && { salt1: scan.header.salt1, salt2: scan.header.salt2 };
    appendFileSync(commits, `${known} ${Date.now()}\n`);
  };
}

export async function commitLogBenchmark(o: BenchOptions): Promise<Record<string, unknown>> {
  const n = o.quick ? 1000 : 4000;
  const rounds = o.quick ? 2 : 5;
  const cases: Record<string, (s: Scratch) => (() => void) | undefined> = {
    "insert alone": () => undefined,
    "insert + scan WAL + append (before)": scanAndAppend,
    "insert + FrameLog.afterCommit (now)": (s) => {
      const log = new FrameLog(s.file);
      return () => {
        log.afterCommit();
      };
    },
  };
  const best: Record<string, number> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, after] of Object.entries(cases))
      best[name] = Math.min(best[name] ?? Infinity, median(n, after));
  }
  const base = best["insert alone"]!;
  console.log(
    `\nThe frame log after a commit: single-row inserts, median µs, best of ${rounds} rounds of ${n}`,
  );
  console.log(
    table(
      ["case", "µs per insert", "ratio to insert alone"],
      Object.entries(best).map(([name, us]) => [name, fmt(us, 1), fmt(us / base, 2)]),
    ),
  );
  return { commitLog: best };
}
