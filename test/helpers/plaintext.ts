import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** A database file and the files SQLite and Shoal keep beside it. */
const COMPANIONS = ["", "-wal", "-shm", "-journal"];

/**
 * The files among `file` and its companions (`-wal`, `-shm`, `-journal`) whose raw bytes contain
 * `marker` (as UTF-8, the encoding of every hosted database, and as UTF-16 in case a file uses it).
 * Empty when none leaks it. A marker should be distinctive enough never to occur by chance (16
 * random characters or more).
 */
export function filesHoldingText(file: string, marker: string): string[] {
  return COMPANIONS.map((s) => file + s).filter((f) => existsSync(f) && holds(f, marker));
}

/**
 * Every file under `dir`, at any depth (a data folder: databases, replicas, frame logs, history
 * images), whose raw bytes contain `marker`: for "nothing on disk holds the plaintext".
 */
export function filesUnderHoldingText(dir: string, marker: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && holds(p, marker)) found.push(p);
    }
  };
  if (existsSync(dir) && statSync(dir).isDirectory()) walk(dir);
  return found;
}

function holds(file: string, marker: string): boolean {
  const bytes = readFileSync(file);
  return bytes.includes(Buffer.from(marker, "utf8")) || bytes.includes(Buffer.from(marker, "utf16le"));
}
