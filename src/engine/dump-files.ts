import { randomBytes } from "node:crypto";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";

/** An uploaded SQL dump waiting to seed a new database. */
export interface DumpInfo {
  id: string;
  orgId: string;
  bytes: number;
  createdAt: number;
  expiresAt: number;
}

/** The upload was larger than allowed; nothing was kept. */
export class DumpTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the dump is larger than ${maxBytes} bytes`);
  }
}

const ID = /^[A-Za-z0-9_-]{22}$/;

/**
 * Uploaded SQL dumps, in `<data>/dumps`: `<id>.sql` with `<id>.json` beside it (owner and expiry).
 * Ids are 128 random bits, so a dump URL can't be guessed; a dump is deleted once it seeded a
 * database, or when it expires unused.
 */
export class DumpFiles {
  constructor(
    private readonly dir: string,
    readonly ttlMs = 24 * 3_600_000,
  ) {}

  /** Streams an upload to disk, refusing it (and keeping nothing) past `maxBytes`. */
  async save(orgId: string, content: AsyncIterable<Uint8Array>, maxBytes: number, now = Date.now()) {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const id = randomBytes(16).toString("base64url");
    const part = path.join(this.dir, `${id}.sql.part`);
    let bytes = 0;
    async function* limited() {
      for await (const chunk of content) {
        bytes += chunk.length;
        if (bytes > maxBytes) throw new DumpTooLargeError(maxBytes);
        yield chunk;
      }
    }
    // Opened here, not by the stream: a failed upload's file must be gone once this throws.
    const fd = openSync(part, "w", 0o600);
    try {
      await pipeline(limited, createWriteStream("", { fd }));
    } catch (e) {
      rmSync(part, { force: true });
      throw e;
    }
    const info: DumpInfo = { id, orgId, bytes, createdAt: now, expiresAt: now + this.ttlMs };
    renameSync(part, this.file(id, "sql"));
    writeFileSync(this.file(id, "json"), JSON.stringify(info), { mode: 0o600 });
    return info;
  }

  /** A dump that exists and hasn't expired (an expired one is deleted on the way). */
  find(id: string, now = Date.now()): DumpInfo | undefined {
    if (!ID.test(id)) return undefined;
    let info: DumpInfo;
    try {
      info = JSON.parse(readFileSync(this.file(id, "json"), "utf8")) as DumpInfo;
      statSync(this.file(id, "sql"));
    } catch {
      return undefined;
    }
    if (info.expiresAt <= now) {
      this.remove(id);
      return undefined;
    }
    return info;
  }

  text(id: string): string {
    return readFileSync(this.file(id, "sql"), "utf8");
  }

  remove(id: string): void {
    if (!ID.test(id)) return;
    rmSync(this.file(id, "sql"), { force: true });
    rmSync(this.file(id, "json"), { force: true });
  }

  /** Bytes of an organization's dumps still waiting (uploads count against a per-organization cap). */
  pendingBytes(orgId: string, now = Date.now()): number {
    let total = 0;
    for (const id of this.ids()) {
      const info = this.find(id, now);
      if (info?.orgId === orgId) total += info.bytes;
    }
    return total;
  }

  /** Deletes expired dumps and uploads a crash left half-written; returns how many went. */
  sweep(now = Date.now()): number {
    let removed = 0;
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    for (const name of names) {
      const full = path.join(this.dir, name);
      const orphan = name.endsWith(".sql") && !existsSync(this.file(name.slice(0, -4), "json"));
      if (name.endsWith(".part") || orphan) {
        try {
          if (now - statSync(full).mtimeMs > this.ttlMs) {
            rmSync(full, { force: true });
            removed++;
          }
        } catch {
          // Already gone.
        }
        continue;
      }
      if (!name.endsWith(".json")) continue;
      const id = name.slice(0, -5);
      if (ID.test(id) && !this.find(id, now)) {
        this.remove(id);
        removed++;
      }
    }
    return removed;
  }

  private ids(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((n) => n.endsWith(".json"))
        .map((n) => n.slice(0, -5))
        .filter((id) => ID.test(id));
    } catch {
      return [];
    }
  }

  private file(id: string, ext: "sql" | "json"): string {
    return path.join(this.dir, `${id}.${ext}`);
  }
}
