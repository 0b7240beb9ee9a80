import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";

/**
 * libSQL's embedded replica keeps where it stands in its primary's history beside its file, in
 * `<file>-info`: its sync metadata, JSON with a CRC-32 over version, frame and generation. Read
 * when its file becomes a primary's; written when a replica's file is set at a point of that
 * history by something other than the replica (a seed from the backup bucket, a promotion undone).
 */

/** Where a replica stands in its primary's history: generation and frame within it. */
export interface ReplicaPosition {
  generation: number;
  frame: number;
}

/** Where a libSQL embedded replica stands, from its `-info` file; undefined without one. */
export function replicaPosition(dbPath: string): ReplicaPosition | undefined {
  try {
    const info = JSON.parse(readFileSync(`${dbPath}-info`, "utf8")) as {
      generation?: unknown;
      durable_frame_num?: unknown;
    };
    if (typeof info.generation !== "number" || typeof info.durable_frame_num !== "number") return undefined;
    return { generation: info.generation, frame: info.durable_frame_num };
  } catch {
    return undefined;
  }
}

/** Writes `<dbPath>-info` so the replica's next pull asks for frame `frame + 1` of `generation`. */
export function writeReplicaPosition(dbPath: string, at: ReplicaPosition): void {
  writeDurably(`${dbPath}-info`, JSON.stringify(libsqlMetadata(at.generation, at.frame)));
}

/** Replaces `target` with `body` whole, synced before it takes the old one's place. */
export function writeDurably(target: string, body: string): void {
  const tmp = `${target}.tmp`;
  writeFileSync(tmp, body, { mode: 0o600 });
  const fd = openSync(tmp, "r");
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, target);
}

function libsqlMetadata(generation: number, frame: number) {
  const fields = Buffer.alloc(12);
  fields.writeUInt32LE(0, 0);
  fields.writeUInt32LE(frame, 4);
  fields.writeUInt32LE(generation, 8);
  return { hash: crc32(fields), version: 0, durable_frame_num: frame, generation };
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** CRC-32 (IEEE), as crc32fast computes it (node:zlib's crc32 needs Node 22). */
export function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = (CRC_TABLE[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
