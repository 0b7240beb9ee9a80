import {
  closeSync,
  copyFileSync,
  existsSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { FRAME_BYTES, FRAME_HEADER_BYTES, PAGE_SIZE } from "./wal.js";

/**
 * The starting point of a database's history: `base-<generation>.db` in its frame log's folder is
 * the database file exactly as it was when generation `generation` began, and `base.json` names
 * it. That generation's frames and every later one's, replayed in order onto this image, give any
 * committed state since.
 *
 * One image is kept, not one per generation: the next generation's image is this one plus this
 * generation's frames, so when old generations are pruned the image is moved forward by replaying
 * the pruned frames (see `advanceBase`) instead of storing a full copy at every checkpoint.
 */
export interface BaseImage {
  generation: number;
  /** When that generation began (ms), when known: the end of the previous one, or the creation. */
  startedAt: number | null;
}

/** What the history code needs to know about a frame log's generations. */
export interface GenerationChain {
  current: number;
  archived: ReadonlyArray<{ generation: number; frames: number; endedAt: number }>;
  lost: readonly number[];
}

const BASE_META = "base.json";
/** An image's file carries its generation, so the metadata can never describe another image. */
const imageName = (generation: number) => `base-${generation}.db`;

export function readBase(dir: string): BaseImage | undefined {
  try {
    const image = JSON.parse(readFileSync(path.join(dir, BASE_META), "utf8")) as BaseImage;
    return existsSync(path.join(dir, imageName(image.generation))) ? image : undefined;
  } catch {
    return undefined;
  }
}

/** The file of the starting image `readBase` describes. */
export function basePath(dir: string, image: BaseImage): string {
  return path.join(dir, imageName(image.generation));
}

/**
 * Whether every generation from `from` up to (not including) `to` still has its frames: archived,
 * and not lost to a checkpoint Shoal didn't make.
 */
export function chainIntact(chain: GenerationChain, from: number, to: number): boolean {
  for (let g = from; g < to; g++) {
    if (chain.lost.includes(g) || !chain.archived.some((a) => a.generation === g)) return false;
  }
  return true;
}

/**
 * Called at a rollover of generation `g`, before its checkpoint changes the database file: when
 * the history has no usable starting image (none yet, or a generation since it was lost), the file
 * as it is now, which is exactly generation `g`'s start, is copied aside. Returns the staged copy,
 * to be kept by `keepStagedBase` once the checkpoint succeeded, or undefined when none is needed.
 */
export function stageBase(dir: string, dbPath: string, chain: GenerationChain): string | undefined {
  const base = readBase(dir);
  if (base && base.generation <= chain.current && chainIntact(chain, base.generation, chain.current))
    return undefined;
  const staged = path.join(dir, "base.staged");
  copyFileSync(dbPath, staged);
  return staged;
}

export function keepStagedBase(dir: string, staged: string, image: BaseImage): void {
  install(dir, staged, image);
}

export function dropStagedBase(staged: string | undefined): void {
  if (staged) rmSync(staged, { force: true });
}

/**
 * Before the archived generations older than `keepFrom` are deleted: moves the starting image
 * forward to the start of `keepFrom` by replaying the frames about to go. The image is rebuilt in a
 * copy and swapped in, so a crash leaves the old image or the new one, never a half-applied one.
 * When the frames needed are not all there, the image is dropped (history then restarts at the
 * next checkpoint) rather than kept wrong.
 */
export function advanceBase(
  dir: string,
  chain: GenerationChain,
  keepFrom: number,
  framesFile: (generation: number) => string,
): void {
  const base = readBase(dir);
  if (!base || base.generation >= keepFrom) return;
  if (!chainIntact(chain, base.generation, keepFrom)) {
    dropBase(dir);
    return;
  }
  const next = path.join(dir, "base.next");
  copyFileSync(basePath(dir, base), next);
  const fd = openSync(next, "r+");
  try {
    for (let g = base.generation; g < keepFrom; g++) {
      const frames = chain.archived.find((a) => a.generation === g)!.frames;
      replayFile(fd, framesFile(g), frames);
    }
  } finally {
    closeSync(fd);
  }
  const ended = chain.archived.find((a) => a.generation === keepFrom - 1)?.endedAt ?? null;
  install(dir, next, { generation: keepFrom, startedAt: ended });
}

export function dropBase(dir: string): void {
  rmSync(path.join(dir, BASE_META), { force: true });
  removeImagesExcept(dir, undefined);
}

/**
 * Makes `file` the starting image: it gets its generation's name, then the metadata switches to
 * it (an atomic rename), then older images go. A crash at any point leaves the metadata naming a
 * complete image, or none.
 */
function install(dir: string, file: string, image: BaseImage): void {
  renameSync(file, path.join(dir, imageName(image.generation)));
  const meta = path.join(dir, BASE_META);
  writeFileSync(`${meta}.tmp`, JSON.stringify(image));
  renameSync(`${meta}.tmp`, meta);
  removeImagesExcept(dir, imageName(image.generation));
}

function removeImagesExcept(dir: string, keep: string | undefined): void {
  for (const name of readdirSync(dir)) {
    if (/^base-\d+\.db$/.test(name) && name !== keep) rmSync(path.join(dir, name), { force: true });
  }
}

/**
 * Writes WAL frames onto a database file the way a checkpoint does, each frame's page at its
 * place. Returns the size in pages the last commit frame among them gives (undefined: none); the
 * caller cuts the file to the last commit's size once the whole run is written (`cutToSize`), as a
 * checkpoint does: cutting at an earlier commit would drop pages a later transaction wrote.
 */
export function replayFrames(fd: number, frames: Buffer): number | undefined {
  let size: number | undefined;
  for (let at = 0; at + FRAME_BYTES <= frames.length; at += FRAME_BYTES) {
    const page = frames.readUInt32BE(at);
    const commitSize = frames.readUInt32BE(at + 4);
    writeSync(fd, frames, at + FRAME_HEADER_BYTES, PAGE_SIZE, (page - 1) * PAGE_SIZE);
    if (commitSize !== 0) size = commitSize;
  }
  return size;
}

export function cutToSize(fd: number, pages: number | undefined): void {
  if (pages !== undefined) ftruncateSync(fd, pages * PAGE_SIZE);
}

/** Replays the first `frames` frames of an archived generation's frames file, a batch at a time. */
function replayFile(fd: number, file: string, frames: number): void {
  const batch = 1024;
  const src = openSync(file, "r");
  let size: number | undefined;
  try {
    const buf = Buffer.alloc(batch * FRAME_BYTES);
    for (let done = 0; done < frames; done += batch) {
      const n = Math.min(batch, frames - done);
      const read = readSync(src, buf, 0, n * FRAME_BYTES, done * FRAME_BYTES);
      size = replayFrames(fd, buf.subarray(0, read - (read % FRAME_BYTES))) ?? size;
    }
  } finally {
    closeSync(src);
  }
  cutToSize(fd, size);
}
