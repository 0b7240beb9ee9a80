/**
 * Reads a set of 32-bit integers serialized in Roaring's portable format
 * (https://github.com/RoaringBitmap/RoaringFormatSpec), which the sync client uses to select
 * pages. Only membership is needed, so containers are kept as they are and tested in place: a
 * bitmap of a few hundred bytes can name billions of values, and expanding it is not an option.
 */

export class RoaringFormatError extends Error {}

const COOKIE_NO_RUNS = 12346;
const COOKIE_RUNS = 12347;
const NO_OFFSET_THRESHOLD = 4;
const ARRAY_LIMIT = 4096;
const BITMAP_BYTES = 8192;

type Container =
  | { kind: "array"; values: Uint16Array }
  | { kind: "bitmap"; bits: Uint8Array }
  | { kind: "runs"; starts: Uint16Array; lengths: Uint16Array };

export interface IntSet {
  has(value: number): boolean;
}

export function readRoaring(buf: Uint8Array): IntSet {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let at = 0;
  const need = (n: number) => {
    if (at + n > buf.length) throw new RoaringFormatError("the page selector is cut short");
  };
  const u16 = () => {
    need(2);
    const v = view.getUint16(at, true);
    at += 2;
    return v;
  };
  const u32 = () => {
    need(4);
    const v = view.getUint32(at, true);
    at += 4;
    return v;
  };
  const cookie = u32();
  let size: number;
  let runFlags: Uint8Array | undefined;
  if (cookie === COOKIE_NO_RUNS) {
    size = u32();
  } else if ((cookie & 0xffff) === COOKIE_RUNS) {
    size = (cookie >>> 16) + 1;
    const n = Math.ceil(size / 8);
    need(n);
    runFlags = buf.subarray(at, at + n);
    at += n;
  } else {
    throw new RoaringFormatError("the page selector is not a serialized Roaring bitmap");
  }
  if (size > 65536) throw new RoaringFormatError("the page selector has too many containers");
  const keys: number[] = [];
  const cards: number[] = [];
  for (let i = 0; i < size; i++) {
    keys.push(u16());
    cards.push(u16() + 1);
  }
  if (cookie === COOKIE_NO_RUNS || size >= NO_OFFSET_THRESHOLD) {
    need(4 * size);
    at += 4 * size; // offsets: the containers are read in order anyway
  }
  const containers = new Map<number, Container>();
  for (let i = 0; i < size; i++) {
    const isRun = runFlags !== undefined && (runFlags[i >> 3]! & (1 << (i & 7))) !== 0;
    containers.set(keys[i]!, readContainer(isRun, cards[i]!));
  }
  if (at !== buf.length) throw new RoaringFormatError("the page selector has trailing bytes");
  return { has: (value) => has(containers.get(value >>> 16), value & 0xffff) };

  function readContainer(isRun: boolean, card: number): Container {
    if (isRun) {
      const n = u16();
      const starts = new Uint16Array(n);
      const lengths = new Uint16Array(n);
      for (let r = 0; r < n; r++) {
        starts[r] = u16();
        lengths[r] = u16();
      }
      return { kind: "runs", starts, lengths };
    }
    if (card > ARRAY_LIMIT) {
      need(BITMAP_BYTES);
      const bits = buf.subarray(at, at + BITMAP_BYTES);
      at += BITMAP_BYTES;
      return { kind: "bitmap", bits };
    }
    const values = new Uint16Array(card);
    for (let v = 0; v < card; v++) values[v] = u16();
    return { kind: "array", values };
  }
}

function has(c: Container | undefined, low: number): boolean {
  if (!c) return false;
  if (c.kind === "bitmap") return (c.bits[low >> 3]! & (1 << (low & 7))) !== 0;
  if (c.kind === "array") return search(c.values, low) >= 0;
  for (let r = 0; r < c.starts.length; r++) {
    const start = c.starts[r]!;
    if (low >= start && low <= start + c.lengths[r]!) return true;
  }
  return false;
}

function search(values: Uint16Array, x: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = values[mid]!;
    if (v === x) return mid;
    if (v < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
