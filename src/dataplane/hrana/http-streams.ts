import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { ProtocolError } from "./errors.js";
import type { SqlStream } from "./stream.js";

interface Entry {
  stream: SqlStream;
  dbId: string;
  seq: number;
  busy: boolean;
  idle: NodeJS.Timeout | undefined;
}

/** How long an expired stream is remembered, so its next request gets STREAM_EXPIRED instead of "unknown". */
const EXPIRED_MEMORY_MS = 300_000;

/**
 * HTTP streams between requests. A baton names a stream and the position in its sequence, signed
 * with a per-process key: it can't be forged, and reusing an old one (a replayed or concurrent
 * request) is refused, so a stream's requests run strictly one after another.
 */
export class HttpStreams {
  private readonly key = randomBytes(32);
  private readonly entries = new Map<number, Entry>();
  private readonly expired = new Map<number, number>();
  private nextId = 1;
  private draining = false;

  constructor(private readonly idleMs: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** Registers a new stream and marks it busy for the request that opened it. */
  open(stream: SqlStream, dbId: string): number {
    const id = this.nextId++;
    this.entries.set(id, { stream, dbId, seq: 0, busy: true, idle: undefined });
    return id;
  }

  /** Takes the stream a baton names, for one request. */
  resume(baton: string, dbId: string): { id: number; stream: SqlStream } {
    const [idText, seqText, mac] = baton.split(".");
    const id = Number(idText);
    const seq = Number(seqText);
    if (
      !mac ||
      !Number.isSafeInteger(id) ||
      !Number.isSafeInteger(seq) ||
      !this.verify(`${idText}.${seqText}`, mac)
    ) {
      throw new ProtocolError("invalid baton");
    }
    const entry = this.entries.get(id);
    if (!entry) {
      if (this.expired.has(id))
        throw new ProtocolError("The stream has expired due to inactivity", "STREAM_EXPIRED");
      throw new ProtocolError("the baton names a stream that is closed");
    }
    if (entry.dbId !== dbId) throw new ProtocolError("the baton belongs to another database");
    if (entry.busy || entry.seq !== seq)
      throw new ProtocolError("baton reused: send the baton of the latest response");
    entry.busy = true;
    if (entry.idle) clearTimeout(entry.idle);
    return { id, stream: entry.stream };
  }

  /** Ends a request on a stream: a closed stream is forgotten, an open one gets its next baton. */
  release(id: number): string | null {
    const entry = this.entries.get(id);
    if (!entry) return null;
    if (this.draining) entry.stream.close();
    if (entry.stream.isClosed) {
      this.entries.delete(id);
      return null;
    }
    entry.busy = false;
    entry.seq++;
    entry.idle = setTimeout(() => this.expire(id), this.idleMs);
    entry.idle.unref();
    const payload = `${id}.${entry.seq}`;
    return `${payload}.${this.sign(payload)}`;
  }

  /**
   * Shutdown: closes every idle stream now (rolling back its transaction) and each busy one as
   * soon as its request finishes, so a request in flight completes instead of losing its connection.
   */
  closeAll(): void {
    this.draining = true;
    for (const [id, e] of this.entries) {
      if (e.busy) continue;
      if (e.idle) clearTimeout(e.idle);
      e.stream.close();
      this.entries.delete(id);
    }
  }

  private expire(id: number): void {
    const entry = this.entries.get(id);
    if (!entry || entry.busy) return;
    entry.stream.close();
    this.entries.delete(id);
    const now = Date.now();
    this.expired.set(id, now);
    for (const [old, at] of this.expired) {
      if (now - at < EXPIRED_MEMORY_MS) break;
      this.expired.delete(old);
    }
  }

  private sign(payload: string): string {
    return createHmac("sha256", this.key).update(payload).digest("base64url").slice(0, 22);
  }

  private verify(payload: string, mac: string): boolean {
    const want = Buffer.from(this.sign(payload));
    const got = Buffer.from(mac);
    return want.length === got.length && timingSafeEqual(want, got);
  }
}
