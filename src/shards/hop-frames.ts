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

/** Cuts a byte stream into frames; the bytes of an unfinished frame wait for the next chunk. */
export class FrameReader {
  private pending: Buffer = EMPTY;

  /** The frames `chunk` completes; throws on a frame no peer of ours would send. */
  push(chunk: Buffer): Frame[] {
    let buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const out: Frame[] = [];
    let at = 0;
    while (buf.length - at >= 4) {
      const size = buf.readUInt32BE(at);
      if (size > MAX_FRAME_BYTES) throw new Error(`a hop frame of ${size} bytes is larger than any sent`);
      if (buf.length - at < 4 + size) break;
      const kind = buf.readUInt8(at + 4) as Kind;
      const id = buf.readUInt32BE(at + 5);
      const headBytes = buf.readUInt32BE(at + 9);
      const headEnd = at + PREFIX + headBytes;
      const head = headBytes === 0 ? undefined : JSON.parse(buf.toString("utf8", at + PREFIX, headEnd));
      // A copy, so the frame doesn't keep the whole chunk it came in alive.
      const payload = Buffer.from(buf.subarray(headEnd, at + 4 + size));
      out.push({ kind, id, head, payload });
      at += 4 + size;
    }
    buf = buf.subarray(at);
    this.pending = buf.length === 0 ? EMPTY : Buffer.from(buf);
    return out;
  }
}
