/**
 * The few pieces of the protobuf wire format (https://protobuf.dev/programming-guides/encoding/)
 * that Shoal's sync protocol needs: varints, length-delimited fields, and skipping fields it
 * doesn't know. Hand-written rather than a dependency: two small messages don't justify a code
 * generator or a reflection library, and this is all the format there is for them.
 */

export class ProtobufError extends Error {}

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

/** One field as read: its number, and its value (a number for varints, bytes for the rest). */
export type ProtobufField = { field: number; varint: bigint } | { field: number; bytes: Uint8Array };

/** Reads every field of one message, in order; throws `ProtobufError` on malformed input. */
export function readFields(buf: Uint8Array): ProtobufField[] {
  const fields: ProtobufField[] = [];
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (at >= buf.length) throw new ProtobufError("truncated varint");
      const b = buf[at++]!;
      value |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return value & 0xffff_ffff_ffff_ffffn;
    }
    throw new ProtobufError("varint longer than 10 bytes");
  };
  const take = (n: number): Uint8Array => {
    if (n > buf.length - at) throw new ProtobufError("truncated field");
    const out = buf.subarray(at, at + n);
    at += n;
    return out;
  };
  while (at < buf.length) {
    const key = varint();
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (field === 0) throw new ProtobufError("field number 0");
    if (wire === VARINT) fields.push({ field, varint: varint() });
    else if (wire === LENGTH_DELIMITED) fields.push({ field, bytes: take(Number(varint())) });
    else if (wire === FIXED64) take(8);
    else if (wire === FIXED32) take(4);
    else throw new ProtobufError(`unsupported wire type ${wire}`);
  }
  return fields;
}

/** Builds one message field by field; `message()` gives its bytes, `delimited()` them with a length prefix. */
export class ProtobufWriter {
  private readonly parts: Uint8Array[] = [];
  private size = 0;

  /** A varint field; zero is left out, as proto3 does for defaults. */
  uint(field: number, value: number | bigint): this {
    if (BigInt(value) === 0n) return this;
    return this.push(encodeVarint((BigInt(field) << 3n) | BigInt(VARINT)), encodeVarint(BigInt(value)));
  }

  /** A string field; empty is left out. */
  string(field: number, value: string): this {
    return value === "" ? this : this.bytes(field, Buffer.from(value, "utf8"));
  }

  /** A bytes or sub-message field, written even when empty (an empty sub-message is still present). */
  bytes(field: number, value: Uint8Array): this {
    return this.push(
      encodeVarint((BigInt(field) << 3n) | BigInt(LENGTH_DELIMITED)),
      encodeVarint(BigInt(value.length)),
      value,
    );
  }

  message(): Buffer {
    return Buffer.concat(this.parts, this.size);
  }

  /** The message preceded by its length as a varint, as a stream of messages is framed. */
  delimited(): Buffer {
    const body = this.message();
    return Buffer.concat([encodeVarint(BigInt(body.length)), body]);
  }

  private push(...parts: Uint8Array[]): this {
    for (const p of parts) {
      this.parts.push(p);
      this.size += p.length;
    }
    return this;
  }
}

export function encodeVarint(value: bigint): Uint8Array {
  const out: number[] = [];
  let v = value;
  do {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v === 0n ? b : b | 0x80);
  } while (v !== 0n);
  return Uint8Array.from(out);
}

/**
 * Splits a stream of length-delimited messages (what `delimited()` writes, one after another).
 * Returns the complete messages and how many bytes they took; a partial message at the end is left.
 */
export function splitDelimited(buf: Uint8Array): { messages: Uint8Array[]; used: number } {
  const messages: Uint8Array[] = [];
  let at = 0;
  for (;;) {
    let len = 0;
    let shift = 0;
    let i = at;
    let complete = false;
    while (i < buf.length && shift < 35) {
      const b = buf[i++]!;
      len += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if ((b & 0x80) === 0) {
        complete = true;
        break;
      }
    }
    if (!complete || i + len > buf.length) return { messages, used: at };
    messages.push(buf.subarray(i, i + len));
    at = i + len;
  }
}
