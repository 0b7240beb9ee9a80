import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import { FRAME_BYTES } from "../engine/wal.js";

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

const MAGIC = Buffer.from("SHOALFR1");

/** What a frames object says about the frames it carries. */
export interface FramesHeader {
  generation: number;
  first: number;
  last: number;
  /** Replication index of the generation's frame 0, so a restore can carry the index on. */
  startIndex: number;
  /** Each commit among these frames: the frame count after it and when it was made (ms). */
  commits: Array<[frames: number, at: number]>;
}

/** The object metadata field holding the SHA-256 of the uncompressed content. */
export const CHECKSUM = "sha256";

/** The content of a backup object failed its checks. */
export class DamagedObjectError extends Error {}

export function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * A frames (or archive) object: "SHOALFR1", the header's length (u32), the header as JSON, then
 * the frames exactly as SQLite wrote them into the WAL (24-byte header and the page each). Gzip
 * runs in libuv's thread pool, off the event loop that serves requests.
 */
export async function encodeFrames(
  header: FramesHeader,
  frames: Buffer,
): Promise<{ body: Buffer; metadata: Record<string, string> }> {
  const json = Buffer.from(JSON.stringify(header));
  const size = Buffer.alloc(4);
  size.writeUInt32BE(json.length);
  const plain = Buffer.concat([MAGIC, size, json, frames]);
  return { body: await gzipAsync(plain, { level: 6 }), metadata: { [CHECKSUM]: sha256(plain) } };
}

/** Reads a frames object back, checking its checksum, header and length. */
export async function decodeFrames(
  body: Buffer,
  metadata: Record<string, string>,
  key: string,
): Promise<{ header: FramesHeader; frames: Buffer }> {
  let plain: Buffer;
  try {
    plain = await gunzipAsync(body);
  } catch {
    throw new DamagedObjectError(`${key} is not a gzip stream`);
  }
  const expected = metadata[CHECKSUM];
  if (expected !== undefined && expected !== sha256(plain)) {
    throw new DamagedObjectError(`${key} doesn't match its checksum`);
  }
  if (plain.length < 12 || !plain.subarray(0, 8).equals(MAGIC)) {
    throw new DamagedObjectError(`${key} is not a frames object`);
  }
  const size = plain.readUInt32BE(8);
  const header = JSON.parse(plain.subarray(12, 12 + size).toString("utf8")) as FramesHeader;
  const frames = plain.subarray(12 + size);
  if (frames.length !== (header.last - header.first + 1) * FRAME_BYTES) {
    throw new DamagedObjectError(
      `${key} holds ${frames.length} bytes of frames, not ${header.last - header.first + 1} frames`,
    );
  }
  return { header, frames };
}

/** What `database.json` holds: enough to tell an operator what the folder is. */
export interface Manifest {
  format: 1;
  id: string;
  labels: Record<string, string>;
  /** When this database was first shipped (ms). */
  since: number;
}

export function encodeManifest(m: Manifest): Buffer {
  return Buffer.from(`${JSON.stringify(m, null, 2)}\n`);
}

export function decodeManifest(body: Buffer): Manifest {
  return JSON.parse(body.toString("utf8")) as Manifest;
}
