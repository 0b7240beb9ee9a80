import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import {
  advanceBase,
  dropBase,
  dropStagedBase,
  type GenerationChain,
  keepStagedBase,
  stageBase,
} from "./history.js";
import { FRAME_BYTES, readWalFrames, scanWal, type WalScan } from "./wal.js";
import { WalIndex } from "./wal-index.js";

/** One finished generation whose frames are kept for replicas still reading it. */
interface Archived {
  generation: number;
  frames: number;
  /** Replication index at the generation's start. */
  startIndex: number;
  endedAt: number;
}

interface Meta {
  /** Current generation, from 1: it started at the last checkpoint. */
  generation: number;
  /** Salts of the WAL cycle holding the current generation's frames, once it has any. */
  salts?: { salt1: number; salt2: number };
  /** Frames of every earlier generation together: the replication index counts across generations. */
  baseIndex: number;
  archived: Archived[];
  /** Generations whose frames were lost (a checkpoint Shoal didn't make): replicas must start over. */
  lost: number[];
}

/** A run of frames of one generation and where it starts in the replication index. */
export interface GenerationSpan {
  generation: number;
  startIndex: number;
  frames: number;
}

export interface FrameHistory {
  current: GenerationSpan;
  archived: readonly GenerationSpan[];
  /** Generations whose frames are gone (a checkpoint Shoal didn't make, a replaced file). */
  lost: readonly number[];
  walPath: string;
}

export type FrameRead =
  | { kind: "frames"; data: Buffer }
  /** Nothing at or after `start` in that generation: the client is caught up, or must move on. */
  | { kind: "past-end"; latest: number }
  /** The generation's frames are no longer available. */
  | { kind: "gone"; latest: number };

/** The folder of a primary's frame log: archives, commit times, its starting image, the schema journal. */
export function frameLogFolder(dbPath: string): string {
  return `${dbPath}.log`;
}

/**
 * The replication log of one primary database, for sync protocol v2.
 *
 * A generation is the run of WAL frames between two checkpoints. Only Shoal checkpoints (clients
 * can't, SQLite's auto-checkpoint is off, and the pool checkpoints before closing a database's
 * last connection), so the database file always holds exactly the state at the start of the
 * current generation: that file is the generation's export. The current generation's frames are
 * read from the live WAL; at each checkpoint the finished generation's frames are archived first,
 * so a replica midway through it can finish it. Commit times are recorded for point-in-time reads,
 * and a starting image is kept beside the archives (see history.ts) so that any recorded commit
 * can be rebuilt.
 */
export class FrameLog {
  private meta: Meta;
  private committed = 0;
  /**
   * Frames of the current generation already recorded with a commit time. Starts from the
   * commits file rather than from the WAL: a log opened right after a commit (the first write
   * since start-up) must still record and announce that commit.
   */
  private notified = 0;
  private readonly dir: string;
  private readonly walPath: string;
  /** Where committed frames are counted after each commit (see wal-index.ts). */
  private readonly walIndex: WalIndex;
  /** The current generation's commits file, kept open while the database is (see `closeFiles`). */
  private commitsFd: number | undefined;

  constructor(
    readonly dbPath: string,
    /** Told when a checkpoint Shoal didn't make ended the current generation, its frames lost. */
    private readonly onLost?: (generation: number) => void,
  ) {
    this.dir = frameLogFolder(dbPath);
    this.walPath = `${dbPath}-wal`;
    this.walIndex = new WalIndex(`${dbPath}-shm`);
    this.meta = this.loadMeta();
    this.refresh();
    this.notified = Math.min(this.committed, this.commits(this.meta.generation).at(-1)?.frames ?? 0);
  }

  get generation(): number {
    return this.meta.generation;
  }

  /** Position of the last committed frame: generation, frame within it, and the global index. */
  position(): { generation: number; frame: number; index: number } {
    return {
      generation: this.meta.generation,
      frame: this.committed,
      index: this.meta.baseIndex + this.committed,
    };
  }

  /** The replication index of frame `frame` of generation `g`, if that generation is known. */
  indexAt(generation: number, frame: number): number | undefined {
    if (generation === this.meta.generation) return this.meta.baseIndex + frame;
    const archived = this.meta.archived.find((a) => a.generation === generation);
    return archived ? (archived.startIndex ?? 0) + frame : undefined;
  }

  /** Frames committed in the current generation (read from the live WAL). */
  get pending(): number {
    return this.committed;
  }

  /**
   * Called after every write transaction ends, while the writer still holds the database's write
   * lock: counts the newly committed frames and records when they were committed.
   */
  afterCommit(now = Date.now()): number {
    // Right after a commit on an open connection the wal-index is live: one read instead of a scan.
    this.refresh(true);
    const before = this.notified;
    if (this.committed > before) {
      this.commitsFd ??= openSync(this.file("commits"), "a");
      writeSync(this.commitsFd, `${this.committed} ${now}\n`);
    }
    this.notified = Math.max(before, this.committed);
    return Math.max(0, this.committed - before);
  }

  /**
   * Closes the descriptors kept between commits; they open again on the next. Called before the
   * database's last connection closes (SQLite then deletes the files they point into).
   */
  closeFiles(): void {
    this.walIndex.close();
    if (this.commitsFd === undefined) return;
    closeSync(this.commitsFd);
    this.commitsFd = undefined;
  }

  /** The generations whose frames exist, for rebuilding past states (point-in-time restores). */
  chain(): GenerationChain {
    this.refresh();
    return { current: this.meta.generation, archived: this.meta.archived, lost: this.meta.lost };
  }

  /**
   * Where every readable frame lies in the replication index, for the sync protocol's page diffs:
   * the current generation (its frames in the live WAL) and the archived ones (in `archivePath`).
   */
  history(): FrameHistory {
    this.refresh();
    return {
      current: { generation: this.meta.generation, startIndex: this.meta.baseIndex, frames: this.committed },
      archived: this.meta.archived.map((a) => ({
        generation: a.generation,
        startIndex: a.startIndex ?? 0,
        frames: a.frames,
      })),
      lost: this.meta.lost,
      walPath: this.walPath,
    };
  }

  /** The file holding an archived generation's frames, back to back, without a WAL header. */
  archivePath(generation: number): string {
    return this.file("frames", generation);
  }

  /** The folder holding this log's archives, commit times and starting image. */
  get folder(): string {
    return this.dir;
  }

  /** Frames `start`..`end - 1` (1-based) of a generation, as many whole frames as exist. */
  read(generation: number, start: number, end: number): FrameRead {
    const latest = this.meta.generation;
    if (generation === latest) {
      this.refresh();
      if (start > this.committed) return { kind: "past-end", latest };
      return { kind: "frames", data: readWalFrames(this.walPath, start, Math.min(end, this.committed + 1)) };
    }
    const archived = this.meta.archived.find((a) => a.generation === generation);
    if (!archived) return { kind: generation < latest ? "gone" : "past-end", latest };
    if (start > archived.frames) return { kind: "past-end", latest };
    const stop = Math.min(end, archived.frames + 1);
    const data = Buffer.alloc((stop - start) * FRAME_BYTES);
    const fd = openSync(this.file("frames", generation), "r");
    try {
      readSync(fd, data, 0, data.length, (start - 1) * FRAME_BYTES);
    } finally {
      closeSync(fd);
    }
    return { kind: "frames", data };
  }

  /**
   * Ends the current generation: archives its frames, lets `checkpoint` move them into the database
   * file and empty the WAL (it must report whether it did), and starts the next generation.
   * Returns false, changing nothing, when the checkpoint couldn't complete.
   */
  rollover(checkpoint: () => boolean, now = Date.now()): boolean {
    this.refresh();
    const g = this.meta.generation;
    const frames = this.committed;
    if (frames === 0) return true;
    const tmp = `${this.file("frames", g)}.tmp`;
    writeFileSync(tmp, readWalFrames(this.walPath, 1, frames + 1));
    // The file is still generation g's starting image: the last moment to keep it for history.
    let staged: string | undefined;
    try {
      staged = stageBase(this.dir, this.dbPath, this.chain());
    } catch {
      // History is a convenience of replication's log: without an image it starts again later.
      staged = undefined;
    }
    if (!checkpoint()) {
      rmSync(tmp, { force: true });
      dropStagedBase(staged);
      return false;
    }
    renameSync(tmp, this.file("frames", g));
    const startedAt = this.meta.archived.find((a) => a.generation === g - 1)?.endedAt ?? null;
    this.closeFiles();
    if (existsSync(this.file("commits"))) renameSync(this.file("commits"), this.file("commits", g));
    this.meta = {
      generation: g + 1,
      baseIndex: this.meta.baseIndex + frames,
      archived: [
        ...this.meta.archived,
        { generation: g, frames, startIndex: this.meta.baseIndex, endedAt: now },
      ],
      lost: this.meta.lost,
    };
    this.committed = 0;
    this.notified = 0;
    this.saveMeta();
    try {
      if (staged) keepStagedBase(this.dir, staged, { generation: g, startedAt });
    } catch {
      dropStagedBase(staged);
    }
    return true;
  }

  /**
   * The database file is replaced whole (an uploaded database installed over an empty one):
   * `replace` swaps the files, and the current generation ends as lost, since its frames don't
   * lead to the new file. Replicas still in it get "gone" and start over from the new file, which
   * is the next generation's export; history starts again from it too.
   */
  restart(replace: () => void): void {
    this.refresh();
    replace();
    const g = this.meta.generation;
    this.meta = {
      generation: g + 1,
      baseIndex: this.meta.baseIndex + this.committed,
      archived: this.meta.archived,
      lost: [...this.meta.lost, g],
    };
    this.committed = 0;
    this.notified = 0;
    this.closeFiles();
    rmSync(this.file("commits"), { force: true });
    dropBase(this.dir);
    this.saveMeta();
  }

  /** Drops archived generations that ended before `before`, keeping at least the newest `keep`. */
  prune(before: number, keep = 1): number[] {
    const sorted = [...this.meta.archived].sort((a, b) => a.generation - b.generation);
    const dropped = sorted.slice(0, Math.max(0, sorted.length - keep)).filter((a) => a.endedAt < before);
    if (dropped.length === 0) return [];
    const gone = new Set(dropped.map((a) => a.generation));
    const keepFrom = sorted.find((a) => !gone.has(a.generation))?.generation ?? this.meta.generation;
    try {
      advanceBase(this.dir, this.chain(), keepFrom, (g) => this.file("frames", g));
    } catch {
      dropBase(this.dir);
    }
    for (const g of gone) {
      rmSync(this.file("frames", g), { force: true });
      rmSync(this.file("commits", g), { force: true });
    }
    this.meta = { ...this.meta, archived: this.meta.archived.filter((a) => !gone.has(a.generation)) };
    this.saveMeta();
    return [...gone];
  }

  /** Commit times of a generation (frame count after each commit), oldest first. */
  commits(generation: number): Array<{ frames: number; at: number }> {
    const file =
      generation === this.meta.generation ? this.file("commits") : this.file("commits", generation);
    if (!existsSync(file)) return [];
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [frames, at] = line.split(" ");
        return { frames: Number(frames), at: Number(at) };
      });
  }

  /** Reconciles with the live WAL; a checkpoint made behind Shoal's back starts a new generation. */
  private refresh(fromIndex = false): void {
    const scan =
      (fromIndex ? this.indexed() : undefined) ?? scanWal(this.walPath, this.committed, this.meta.salts);
    const salts = scan ? { salt1: scan.header.salt1, salt2: scan.header.salt2 } : undefined;
    const known = this.meta.salts;
    if (known && (!salts || salts.salt1 !== known.salt1 || salts.salt2 !== known.salt2)) {
      // The WAL this generation lived in is gone: its frames past any archive are lost, and the
      // database file now holds a state no earlier export had. Start over in a new generation.
      const g = this.meta.generation;
      this.meta = {
        generation: g + 1,
        baseIndex: this.meta.baseIndex + this.committed,
        archived: this.meta.archived,
        lost: [...this.meta.lost, g],
      };
      this.committed = 0;
      this.notified = 0;
      this.closeFiles();
      rmSync(this.file("commits"), { force: true });
      this.saveMeta();
      this.onLost?.(g);
    }
    if (!scan || scan.committed === 0) {
      this.committed = 0;
      return;
    }
    this.committed = scan.committed;
    if (!this.meta.salts) {
      this.meta = { ...this.meta, salts };
      this.saveMeta();
    }
  }

  /**
   * The committed frames as the wal-index header gives them: what scanning the WAL would find,
   * for one read. An empty or unreadable index leaves the answer to the scan.
   */
  private indexed(): (Pick<WalScan, "committed"> & { header: { salt1: number; salt2: number } }) | undefined {
    const state = this.walIndex.read();
    if (!state || state.committed === 0) return undefined;
    return { committed: state.committed, header: { salt1: state.salt1, salt2: state.salt2 } };
  }

  private file(kind: "frames" | "commits", generation?: number): string {
    return path.join(this.dir, generation === undefined ? `current.${kind}` : `${generation}.${kind}`);
  }

  private loadMeta(): Meta {
    mkdirSync(this.dir, { recursive: true });
    try {
      return JSON.parse(readFileSync(path.join(this.dir, "meta.json"), "utf8")) as Meta;
    } catch {
      return { generation: 1, baseIndex: 0, archived: [], lost: [] };
    }
  }

  private saveMeta(): void {
    const file = path.join(this.dir, "meta.json");
    writeFileSync(`${file}.tmp`, JSON.stringify(this.meta));
    renameSync(`${file}.tmp`, file);
  }
}
