import type { SqlValue } from "../../engine/connection.js";
import { ProtocolError } from "./errors.js";

/** A value as Hrana's JSON encoding carries it. */
export type HranaValue =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

const INTEGER = /^-?\d{1,19}$/;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/**
 * Decodes a client's value. Integers arrive as decimal strings (64-bit safe) and become bigints so
 * they bind as INTEGER; floats arrive as JSON numbers and bind as REAL even when integral, exactly
 * like sqld (the JS client sends every `number` as a float).
 */
export function decodeValue(v: unknown): SqlValue {
  if (typeof v !== "object" || v === null) throw new ProtocolError("a value must be an object with a type");
  const o = v as Record<string, unknown>;
  switch (o.type) {
    case "null":
      return null;
    case "integer": {
      const text = typeof o.value === "number" && Number.isSafeInteger(o.value) ? String(o.value) : o.value;
      if (typeof text !== "string" || !INTEGER.test(text)) throw new ProtocolError("invalid integer value");
      const n = BigInt(text);
      if (n < I64_MIN || n > I64_MAX) throw new ProtocolError("integer value out of the 64-bit range");
      return n;
    }
    case "float":
      if (typeof o.value !== "number") throw new ProtocolError("invalid float value");
      return o.value;
    case "text":
      if (typeof o.value !== "string") throw new ProtocolError("invalid text value");
      return o.value;
    case "blob":
      if (typeof o.base64 !== "string") throw new ProtocolError("invalid blob value");
      // Accepts padded (the JS client) and unpadded (sqld) base64 alike.
      return Buffer.from(o.base64, "base64");
    default:
      throw new ProtocolError(`unknown value type: ${String(o.type)}`);
  }
}

/** Encodes an engine value; blobs are unpadded base64, as sqld sends them. */
export function encodeValue(v: SqlValue): HranaValue {
  if (v === null) return { type: "null" };
  switch (typeof v) {
    case "bigint":
      return { type: "integer", value: v.toString() };
    case "number":
      return { type: "float", value: v };
    case "string":
      return { type: "text", value: v };
    default:
      return {
        type: "blob",
        base64: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64").replace(/=+$/, ""),
      };
  }
}
