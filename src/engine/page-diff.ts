import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { FrameHistory, GenerationSpan } from "./frame-log-meta.js";
import { FRAME_BYTES, FRAME_HEADER_BYTES, PAGE_SIZE, WAL_HEADER_BYTES } from "./wal.js";

/** A committed state of a database: its generation, and its position in the replication index. */
export interface SyncPoint {
  generation: number;
  index: number;
}

/** What a page diff needs from a frame log; `FrameLog` provides it. */
export interface FrameSource {
  readonly dbPath: string;
  history(): FrameHistory;
  archivePath(generation: number): string;
}

/** The state asked for can't be rebuilt from what the log keeps. */
export class SyncPointGone extends Error {}

/** Where the content of one page lies: an open file and the byte offset of the page in it. */
interface PageAt {
  fd: number;
  offset: number;
}

/**
 * The pages that take a copy of the database from one committed state to another: every page
 * written by a frame between the two, at its latest version, when the frame log still has all
 * those frames; every page of the database otherwise (or when no starting state is given). Files
 * are opened when the set is made and read from it later, so an archive pruned meanwhile can still
 * be read; the caller must keep the live WAL from being checkpointed until `close()`.
 */
export class PageDiff {
  private constructor(
    readonly to: SyncPoint,
    /** The database's size in pages at `to`. */
    readonly dbPages: number,
    /** Page numbers (1-based, ascending) whose content the diff carries. */
    readonly pages: readonly number[],
    /** Whether the diff is the whole database rather than what changed. */
    readonly whole: boolean,
    private readonly at: ReadonlyMap<number, PageAt>,
    private readonly fds: number[],
  ) {}

  /**
   * The diff from `from` (undefined: nothing) to `to` (undefined: the latest commit). `to` must lie
   * in the current generation: only there can any earlier state of a page be found. `keep` limits
   * the pages to those it accepts.
   */
  static build(
    log: FrameSource,
    from: SyncPoint | undefined,
    to: SyncPoint | undefined,
    keep: (page: number) => boolean = () => true,
  ): PageDiff {
    const h = log.history();
    const cur = h.current;
    const target = to ?? { generation: cur.generation, index: cur.startIndex + cur.frames };
    const upTo = target.index - cur.startIndex;
    if (target.generation !== cur.generation || upTo < 0 || upTo > cur.frames)
      throw new SyncPointGone(`revision ${target.generation}/${target.index} is no longer available`);
    const fds: number[] = [];
    const open = (file: string) => {
      const fd = openSync(file, "r");
      fds.push(fd);
      return fd;
    };
    try {
      const wal = upTo > 0 ? open(h.walPath) : undefined;
      const db = open(log.dbPath);
      const dbPages = wal !== undefined ? commitSize(wal, upTo) : headerPages(db);
      const spans = from ? spansBetween(h, from, target) : undefined;
      const at = new Map<number, PageAt>();
      if (spans) {
        for (const s of spans) {
          const isCurrent = s.generation === cur.generation;
          const fd = isCurrent ? wal! : open(log.archivePath(s.generation));
          addFrames(at, fd, isCurrent ? WAL_HEADER_BYTES : 0, s.first, s.last);
        }
      } else {
        for (let p = 1; p <= dbPages; p++) at.set(p, { fd: db, offset: (p - 1) * PAGE_SIZE });
        if (wal !== undefined) addFrames(at, wal, WAL_HEADER_BYTES, 1, upTo);
      }
      const pages = [...at.keys()].filter((p) => p <= dbPages && keep(p)).sort((a, b) => a - b);
      return new PageDiff(target, dbPages, pages, spans === undefined, at, fds);
    } catch (e) {
      for (const fd of fds) closeSync(fd);
      throw e;
    }
  }

  /** The content of `page` (one of `pages`), into `into` at `offset`. */
  read(page: number, into: Buffer, offset = 0): void {
    const loc = this.at.get(page);
    if (!loc) throw new Error(`page ${page} is not part of this diff`);
    const n = readSync(loc.fd, into, offset, PAGE_SIZE, loc.offset);
    // A page past the end of a file reads as zeros, as SQLite treats it.
    if (n < PAGE_SIZE) into.fill(0, offset + n, offset + PAGE_SIZE);
  }

  close(): void {
    for (const fd of this.fds.splice(0)) closeSync(fd);
  }
}

/** Frames `first`..`last` (1-based, inclusive) of one generation. */
interface FrameSpan {
  generation: number;
  first: number;
  last: number;
}

/**
 * The frames between two states, generation by generation; undefined when some of them are gone
 * (a lost or pruned generation), or when `from` isn't a state this log ever had.
 */
function spansBetween(h: FrameHistory, from: SyncPoint, to: SyncPoint): FrameSpan[] | undefined {
  const known = (g: number): GenerationSpan | undefined =>
    g === h.current.generation ? h.current : h.archived.find((a) => a.generation === g);
  if (from.generation > to.generation || from.index > to.index) return undefined;
  const spans: FrameSpan[] = [];
  for (let g = from.generation; g <= to.generation; g++) {
    const gen = known(g);
    if (!gen || h.lost.includes(g)) return undefined;
    const first = g === from.generation ? from.index - gen.startIndex + 1 : 1;
    const last = g === to.generation ? to.index - gen.startIndex : gen.frames;
    if (first < 1 || first > gen.frames + 1 || last > gen.frames) return undefined;
    if (first <= last) spans.push({ generation: g, first, last });
  }
  return spans;
}

/** Records each frame's page, later frames replacing earlier ones; headers only are read. */
function addFrames(at: Map<number, PageAt>, fd: number, base: number, first: number, last: number): void {
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  for (let f = first; f <= last; f++) {
    const start = base + (f - 1) * FRAME_BYTES;
    if (readSync(fd, header, 0, FRAME_HEADER_BYTES, start) < FRAME_HEADER_BYTES)
      throw new Error(`frame ${f} is missing from the frame log`);
    at.set(header.readUInt32BE(0), { fd, offset: start + FRAME_HEADER_BYTES });
  }
}

/** The database size a commit frame records (SQLite writes it into every commit frame's header). */
function commitSize(wal: number, frame: number): number {
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  readSync(wal, header, 0, FRAME_HEADER_BYTES, WAL_HEADER_BYTES + (frame - 1) * FRAME_BYTES);
  const size = header.readUInt32BE(4);
  if (size === 0) throw new Error(`frame ${frame} is not a commit frame`);
  return size;
}

/**
 * The size of the database file in pages, by SQLite's own rule: the header's count when it is
 * valid (its "version valid for" matches the change counter), the file's length otherwise.
 */
function headerPages(db: number): number {
  const header = Buffer.alloc(100);
  const n = readSync(db, header, 0, 100, 0);
  const fromFile = Math.ceil(fstatSync(db).size / PAGE_SIZE);
  if (n < 100) return fromFile;
  const counted = header.readUInt32BE(28);
  return counted > 0 && header.readUInt32BE(92) === header.readUInt32BE(24) ? counted : fromFile;
}
