import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import path from "node:path";

/** Room for a database file's path; a longer one is cut (the database id is at its end). */
const SIZE = 1024;

/** Where a shard writes which database it runs statements on: `<data>/shards/<index>.running`. */
export function markerPath(dataDir: string, index: number): string {
  return path.join(dataDir, "shards", `${index}.running`);
}

/**
 * The file a shard keeps the database it last ran statements on in, rewritten in place (one
 * write, no allocation of a new file) each time that changes: after the shard died without a
 * word (the driver aborted it, or the watchdog killed it), its supervisor reads which database's
 * statements it was running. The write is small and goes to the page cache; a crash of the
 * process (not of the machine) keeps it.
 */
export class RunningMarker {
  private readonly fd: number;
  private readonly buf = Buffer.alloc(SIZE);

  constructor(file: string) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.fd = openSync(file, "w", 0o600);
  }

  note(dbPath: string): void {
    this.buf.fill(0x20);
    const tail = dbPath.length > SIZE - 1 ? dbPath.slice(-(SIZE - 1)) : dbPath;
    this.buf.write(tail, 0, "utf8");
    this.buf[SIZE - 1] = 0x0a;
    writeSync(this.fd, this.buf, 0, SIZE, 0);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The database id a shard's marker names, if any (its files are `<location>/<id>.db`). */
export function readMarker(file: string): { path: string; dbId: string } | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch {
    return undefined;
  }
  const name = path.basename(text);
  if (!name.endsWith(".db")) return undefined;
  return { path: text, dbId: name.slice(0, -3) };
}
