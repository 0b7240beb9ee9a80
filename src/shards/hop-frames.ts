/**
 * The framing of the shard-to-shard SQL hop (sql-hop.ts, hop-server.ts): many requests at once
 * on one Unix socket, each answered when it is done, in any order. A frame is
 *
 *   u32 length of what follows | u8 kind | u32 request id | u32 head length | head (JSON) | payload
 *
 * The head is small (a request's method, URL, headers and client address; an answer's status and
 * headers); the payload is a request's body or an answer's bytes, copied as they are.
 */

export const Kind = {
  /** A request whole: head `HopRequestHead`, payload its body. */
  Request: 1,
  /** An answer whole: head `HopAnswerHead`, payload its body. */
  Answer: 2,
  /** An answer's status and headers; its body follows in `Chunk`s and an `End`. */
  Head: 3,
  Chunk: 4,
  /** The answer's last bytes (maybe none). */
  End: 5,
  /**
   * Sender: the client went away, stop. Owner: the answer broke off (cut the client's connection),
   * or, with head `{refused: true}`, the request was refused unrun (the owner is stopping).
   */
  Abort: 6,
  /** Sender: the client isn't taking the answer's bytes; hold them until `Resume`. */
  Pause: 7,
  Resume: 8,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

export interface HopRequestHead {
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  /** The TCP peer of the client's connection, as the receiving process saw it. */
  peer: string | undefined;
}

export interface HopAnswerHead {
  status: number;
  headers: Record<string, string | number | string[]>;
}

export interface Frame {
  kind: Kind;
  id: number;
  head: unknown;
  payload: Buffer;
}

const PREFIX = 13;
const EMPTY = Buffer.alloc(0);

/** One frame's bytes. */
export function encodeFrame(kind: Kind, id: number, head?: unknown, payload?: Buffer | string): Buffer {
  const headText = head === undefined ? "" : JSON.stringify(head);
  const headBytes = Buffer.byteLength(headText);
  const body = payload === undefined ? EMPTY : payload;
  const bodyBytes = typeof body === "string" ? Buffer.byteLength(body) : body.length;
  const out = Buffer.allocUnsafe(PREFIX + headBytes + bodyBytes);
  out.writeUInt32BE(PREFIX - 4 + headBytes + bodyBytes, 0);
  out.writeUInt8(kind, 4);
  out.writeUInt32BE(id, 5);
  out.writeUInt32BE(headBytes, 9);
  if (headBytes > 0) out.write(headText, PREFIX, "utf8");
  if (typeof body === "string") out.write(body, PREFIX + headBytes, "utf8");
  else body.copy(out, PREFIX + headBytes);
  return out;
}

/** Largest frame accepted: a body of at most 16 MiB (MAX_BODY_BYTES) with room for its head. */
export const MAX_FRAME_BYTES = 17 * 1024 * 1024;

/**
 * Cuts a byte stream into frames. The chunks of an unfinished frame are kept as they came and
 * joined once it is whole: a large body arriving in many chunks is copied once, not per chunk.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The size of the frame being gathered (from its first 4 bytes), once known. */
  private needed = -1;

  /** The frames `chunk` completes; throws on a frame no peer of ours would send. */
  push(chunk: Buffer): Frame[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: Frame[] = [];
    for (;;) {
      if (this.needed < 0) {
        if (this.buffered < 4) break;
        const size = this.join().readUInt32BE(0);
        if (size > MAX_FRAME_BYTES) throw new Error(`a hop frame of ${size} bytes is larger than any sent`);
        this.needed = 4 + size;
      }
      if (this.buffered < this.needed) break;
      const buf = this.join();
      out.push(frameAt(buf, this.needed));
      const rest = buf.subarray(this.needed);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.buffered = rest.length;
      this.needed = -1;
    }
    return out;
  }

  private join(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0]!;
  }
}

/** The frame at the start of `buf`, `end` bytes long. */
function frameAt(buf: Buffer, end: number): Frame {
  const kind = buf.readUInt8(4) as Kind;
  const id = buf.readUInt32BE(5);
  const headEnd = PREFIX + buf.readUInt32BE(9);
  const head = headEnd === PREFIX ? undefined : JSON.parse(buf.toString("utf8", PREFIX, headEnd));
  // A copy, so the frame doesn't keep the whole chunk it came in alive.
  return { kind, id, head, payload: Buffer.from(buf.subarray(headEnd, end)) };
}
