import { FRAME_BYTES } from "../engine/wal.js";
import type { BackupBucket } from "./bucket.js";
import { Catalog } from "./catalog.js";
import { archiveKey, type BackupObject, databaseFolder, framesKey, parseObjectKey } from "./layout.js";
import { encodeFrames, type FramesHeader } from "./objects.js";
import type { ShippingContext } from "./shipping-context.js";
import type { BackupLog } from "./source.js";

/** Frames in one frames object at most (4 MiB of pages), unless one transaction is larger. */
const MAX_FRAMES = 1024;

type Frames = Extract<BackupObject, { kind: "frames" }> & { size: number };
type Archive = Extract<BackupObject, { kind: "archive" }> & { size: number };

/** Lists a database's folder into a catalog; `keys` also has what the catalog doesn't parse. */
export async function readCatalog(
  bucket: BackupBucket,
  dbId: string,
): Promise<{ catalog: Catalog; keys: Set<string> }> {
  const folder = databaseFolder(bucket.prefix, dbId);
  const catalog = new Catalog();
  const keys = new Set<string>();
  for await (const o of bucket.list(folder)) {
    keys.add(o.key);
    const parsed = parseObjectKey(folder, o.key);
    if (parsed) catalog.add({ ...parsed, size: o.size });
  }
  return { catalog, keys };
}

/** Committed frames of a generation this node still has (0 when it has none). */
export function readFrames(log: BackupLog, generation: number): number {
  const h = log.history();
  if (h.current.generation === generation) return h.current.frames;
  return h.archived.find((a) => a.generation === generation)?.frames ?? 0;
}

/**
 * Uploads the next frames of a generation after `from`, up to `to` at most, as one object ending
 * on a commit (a restore must never stop inside a transaction). Undefined when this node no longer
 * has those frames.
 */
export async function shipFrames(
  ctx: ShippingContext,
  dbId: string,
  log: BackupLog,
  generation: number,
  from: number,
  to: number,
): Promise<Frames | undefined> {
  const commits = log.commits(generation).filter((c) => c.frames > from && c.frames <= to);
  const fits = commits.filter((c) => c.frames - from <= MAX_FRAMES).at(-1);
  const last = fits?.frames ?? commits[0]?.frames ?? to;
  const header = headerOf(log, generation, from + 1, last, ctx.now());
  const data = header && readRange(log, generation, from + 1, last);
  if (!header || !data) return undefined;
  const { body, metadata } = await encodeFrames(header, data);
  const key = framesKey(ctx.bucket.prefix, dbId, generation, from + 1, last);
  await ctx.bucket.put(key, body, metadata);
  return { kind: "frames", generation, first: from + 1, last, key, size: body.length };
}

/** Uploads every frame of a finished generation as its archive object. */
export async function shipArchive(
  ctx: ShippingContext,
  dbId: string,
  log: BackupLog,
  generation: number,
  frames: number,
): Promise<Archive | undefined> {
  const header = headerOf(log, generation, 1, frames, ctx.now());
  const data = header && readRange(log, generation, 1, frames);
  if (!header || !data) return undefined;
  const { body, metadata } = await encodeFrames(header, data);
  const key = archiveKey(ctx.bucket.prefix, dbId, generation, frames);
  await ctx.bucket.put(key, body, metadata);
  return { kind: "archive", generation, frames, key, size: body.length };
}

/**
 * The header of frames `first`..`last`: their commits with their times. Frames committed without
 * a recorded time (the log writes times right after commits) count as committed now, never
 * earlier than they were, as the engine's point-in-time restores count them.
 */
function headerOf(
  log: BackupLog,
  generation: number,
  first: number,
  last: number,
  now: number,
): FramesHeader | undefined {
  const h = log.history();
  const span =
    h.current.generation === generation ? h.current : h.archived.find((a) => a.generation === generation);
  if (!span || span.frames < last) return undefined;
  const commits: Array<[number, number]> = log
    .commits(generation)
    .filter((c) => c.frames >= first && c.frames <= last)
    .map((c) => [c.frames, c.at]);
  const latest = commits.at(-1);
  if (!latest || latest[0] !== last) commits.push([last, Math.max(now, latest?.[1] ?? 0)]);
  return { generation, first, last, startIndex: span.startIndex, commits };
}

function readRange(log: BackupLog, generation: number, first: number, last: number): Buffer | undefined {
  const parts: Buffer[] = [];
  for (let start = first; start <= last; start += MAX_FRAMES) {
    const read = log.read(generation, start, Math.min(start + MAX_FRAMES, last + 1));
    if (read.kind !== "frames") return undefined;
    parts.push(read.data);
  }
  const data = Buffer.concat(parts);
  return data.length === (last - first + 1) * FRAME_BYTES ? data : undefined;
}
