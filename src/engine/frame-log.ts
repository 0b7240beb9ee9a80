import { renameSync, rmSync } from "node:fs";
import path from "node:path";
import { failpoint } from "../lib/failpoints.js";
import { type CommitTime, CommitTimes } from "./commit-times.js";
import { ArchiveCopy, readArchive } from "./frame-archive.js";
import {
  type FrameHistory,
  type FrameRead,
  frameLogFolder,
  loadMeta,
  lostGeneration,
  type Meta,
  rolledOver,
  saveMeta,
  withoutRetired,
} from "./frame-log-meta.js";
import { endGeneration } from "./frame-log-rollover.js";
import { advanceBase, dropBase, dropStagedBase, type GenerationChain, keepStagedBase } from "./history.js";
import { retiredCycle } from "./retired-cycle.js";
import { readWalFrames, scanWal } from "./wal.js";
import { WalIndex } from "./wal-index.js";

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
  private readonly times: CommitTimes;
  /** When the newest commit not yet recorded was made (see `noteCommit`); undefined when none is. */
  private unrecordedAt: number | undefined;
  /** The current generation's frames being copied towards its archive (see `prepareRollover`). */
  private copy: ArchiveCopy | undefined;

  constructor(
    readonly dbPath: string,
    /** Told when a checkpoint Shoal didn't make ended the current generation, its frames lost. */
    private readonly onLost?: (generation: number) => void,
    /** Told when `settle` recorded commits that added frames. */
    private readonly onRecorded?: () => void,
  ) {
    this.dir = frameLogFolder(dbPath);
    this.walPath = `${dbPath}-wal`;
    this.walIndex = new WalIndex(`${dbPath}-shm`);
    this.times = new CommitTimes(this.dir);
    this.meta = loadMeta(this.dir);
    ArchiveCopy.sweep(this.dir);
    this.refresh();
    this.notified = Math.min(this.committed, this.commits(this.meta.generation).at(-1)?.frames ?? 0);
  }

  get generation(): number {
    this.settle();
    return this.meta.generation;
  }

  /** Position of the last committed frame: generation, frame within it, and the global index. */
  position(): { generation: number; frame: number; index: number } {
    this.settle();
    return {
      generation: this.meta.generation,
      frame: this.committed,
      index: this.meta.baseIndex + this.committed,
    };
  }

  /** The replication index of frame `frame` of generation `g`, if that generation is known. */
  indexAt(generation: number, frame: number): number | undefined {
    this.settle();
    if (generation === this.meta.generation) return this.meta.baseIndex + frame;
    const archived = this.meta.archived.find((a) => a.generation === generation);
    return archived ? (archived.startIndex ?? 0) + frame : undefined;
  }

  /** Frames committed in the current generation (read from the live WAL). */
  get pending(): number {
    this.settle();
    return this.committed;
  }

  /**
   * Frames of the current generation as of the last recorded commit, leaving commits noted since
   * unrecorded: for a check made after every commit, which a turn's lag doesn't change.
   */
  get recordedPending(): number {
    return this.committed;
  }

  /**
   * A write transaction just committed (its writer still holds the write lock). Recording it
   * costs a read of the wal-index and a line in the commits file, so it waits: `settle` records
   * every commit noted since the last, as one line with the newest one's time, at the end of the
   * event loop's turn (see HostedDatabases) or as soon as anything reads the log, whichever comes
   * first. A reader therefore never sees the log behind a commit whose answer a client may hold.
   */
  noteCommit(now = Date.now()): void {
    this.unrecordedAt = now;
  }

  /**
   * Records the commits noted since the last record (see `noteCommit`); returns the frames they
   * added. One line stands for them all, timed at the newest: a point-in-time read of a moment
   * between two of them gets the state before both, never a write made after that moment.
   */
  settle(): number {
    const at = this.unrecordedAt;
    if (at === undefined) return 0;
    this.unrecordedAt = undefined;
    let added: number;
    try {
      added = this.afterCommit(at);
    } catch (e) {
      // Still unrecorded: the next reader or commit tries again, and hears the error if it stays.
      this.unrecordedAt ??= at;
      throw e;
    }
    if (added > 0) this.onRecorded?.();
    return added;
  }

  /**
   * Counts the newly committed frames and records when they were committed; called right after a
   * commit, or by `settle` for the commits noted since the last record.
   */
  afterCommit(now = Date.now()): number {
    // Right after a commit on an open connection the wal-index is live: one read instead of a scan.
    this.refresh(true);
    const before = this.notified;
    if (this.committed > before) this.times.append(this.committed, now);
    this.notified = Math.max(before, this.committed);
    return Math.max(0, this.committed - before);
  }

  /**
   * Closes the descriptors kept between commits; they open again on the next. Called before the
   * database's last connection closes (SQLite then deletes the files they point into).
   */
  closeFiles(): void {
    this.walIndex.close();
    this.times.close();
    this.copy?.drop();
    this.copy = undefined;
  }

  /** Starts copying the generation's frames towards its archive in the background, once (see frame-archive.ts). */
  prepareRollover(): void {
    if (this.copy?.generation === this.meta.generation) return;
    this.copy?.drop();
    this.copy = ArchiveCopy.start(this.walPath, this.dir, this.meta.generation, this.committed);
  }

  /** Whether the background copy of the current generation is done (see `prepareRollover`). */
  get rolloverPrepared(): boolean {
    return this.copy?.readyFor(this.meta.generation, this.committed) ?? false;
  }

  /** The generations whose frames exist, for rebuilding past states (point-in-time restores). */
  chain(): GenerationChain {
    this.settle();
    this.refresh();
    return { current: this.meta.generation, archived: this.meta.archived, lost: this.meta.lost };
  }

  /**
   * Where every readable frame lies in the replication index, for the sync protocol's page diffs:
   * the current generation (its frames in the live WAL) and the archived ones (in `archivePath`).
   */
  history(): FrameHistory {
    this.settle();
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
    this.settle();
    const latest = this.meta.generation;
    if (generation === latest) {
      this.refresh();
      if (start > this.committed) return { kind: "past-end", latest };
      return { kind: "frames", data: readWalFrames(this.walPath, start, Math.min(end, this.committed + 1)) };
    }
    const archived = this.meta.archived.find((a) => a.generation === generation);
    if (!archived) return { kind: generation < latest ? "gone" : "past-end", latest };
    if (start > archived.frames) return { kind: "past-end", latest };
    const data = readArchive(this.file("frames", generation), start, Math.min(end, archived.frames + 1));
    return { kind: "frames", data };
  }

  /**
   * Ends the current generation: archives its frames, lets `checkpoint` move them all into the
   * database file (it must report whether it did; a RESTART checkpoint, see retired-cycle.ts), and
   * starts the next generation. Returns false, changing nothing, when the checkpoint couldn't complete.
   */
  rollover(checkpoint: () => boolean, now = Date.now()): boolean {
    this.settle();
    this.refresh();
    const g = this.meta.generation;
    const frames = this.committed;
    if (frames === 0) return true;
    const copy = this.copy;
    this.copy = undefined;
    const ended = endGeneration({
      dir: this.dir,
      dbPath: this.dbPath,
      walPath: this.walPath,
      meta: this.meta,
      copy,
      frames,
      wholePath: `${this.file("frames", g)}.tmp`,
      chain: () => this.chain(),
      checkpoint,
    });
    if (ended.kind === "busy") return false;
    if (ended.kind === "failed") {
      if (ended.retiring) this.meta = ended.retiring;
      throw ended.error;
    }
    const { archive: tmp, staged } = ended;
    renameSync(tmp, this.file("frames", g));
    const startedAt = this.meta.archived.find((a) => a.generation === g - 1)?.endedAt ?? null;
    this.closeFiles();
    this.times.archive(g);
    this.meta = rolledOver(this.meta, frames, now);
    this.committed = 0;
    this.notified = 0;
    // Past the checkpoint the generation has ended whatever happens here: should the state file
    // not be written (a full disk), the one on disk still says "retiring", and the process that
    // opens the log next ends the generation as lost (replicas start over; nothing committed is).
    failpoint("after-commit.rollover-meta");
    saveMeta(this.dir, this.meta);
    try {
      if (staged) keepStagedBase(this.dir, staged, { generation: g, startedAt });
    } catch {
      dropStagedBase(staged);
    }
    return true;
  }

  /**
   * The database file is replaced whole by `replace` (an upload installed over an empty one): the
   * generation ends as lost, replicas in it start over from the new file, and so does history.
   */
  restart(replace: () => void): void {
    this.settle();
    this.refresh();
    replace();
    this.loseCurrent(this.committed);
    dropBase(this.dir);
  }

  /**
   * Empties a WAL still holding the cycle the last generation ended in (see retired-cycle.ts) with
   * `truncate`, a TRUNCATE checkpoint on a connection nothing else uses yet; false if it failed.
   */
  finishRetiredCycle(truncate: () => boolean): boolean {
    this.refresh();
    if (!this.meta.retired) return true;
    if (!truncate()) return false;
    this.meta = withoutRetired(this.meta);
    saveMeta(this.dir, this.meta);
    return true;
  }

  /** Ends the current generation as lost (its frames can't be served: replicas in it start over). */
  private loseCurrent(frames: number, retired?: Meta["retired"]): number {
    const g = this.meta.generation;
    this.meta = lostGeneration(this.meta, frames, retired);
    this.committed = 0;
    this.notified = 0;
    this.closeFiles();
    this.times.dropCurrent();
    saveMeta(this.dir, this.meta);
    return g;
  }

  /**
   * The process ended during a rollover's checkpoint: the file may hold any part of the
   * generation's frames, so the generation ends as lost and its WAL cycle as retired (the next
   * connection's truncation finishes the checkpoint). Its archive, if written, is not kept.
   */
  private abandonRetiring(): void {
    const { retiring, ...meta } = this.meta;
    this.meta = meta;
    for (const f of [`${this.file("frames", meta.generation)}.tmp`, this.file("frames", meta.generation)])
      rmSync(f, { force: true });
    this.times.drop(meta.generation);
    const lost = this.loseCurrent(retiring!.frames, retiring);
    this.onLost?.(lost);
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
      this.times.drop(g);
    }
    this.meta = { ...this.meta, archived: this.meta.archived.filter((a) => !gone.has(a.generation)) };
    saveMeta(this.dir, this.meta);
    return [...gone];
  }

  /** Commit times of a generation (frame count after each commit), oldest first. */
  commits(generation: number): CommitTime[] {
    this.settle();
    return this.times.read(generation === this.meta.generation ? undefined : generation);
  }

  /** Reconciles with the live WAL; a checkpoint made behind Shoal's back starts a new generation. */
  private refresh(fromIndex = false): void {
    if (this.meta.retiring) this.abandonRetiring();
    const scan =
      (fromIndex ? this.walIndex.scan() : undefined) ??
      scanWal(this.walPath, this.committed, this.meta.salts);
    const cycle = retiredCycle(scan, this.meta.retired);
    if (cycle === "continued") {
      // Writes went on in the retired cycle, which the first connection's truncation prevents
      // (see retired-cycle.ts): behind the archived frames, they can't be served as a generation.
      const lost = this.loseCurrent(0, { ...this.meta.retired!, frames: scan!.committed });
      this.onLost?.(lost);
    }
    if (cycle !== "other") {
      this.committed = 0;
      return;
    }
    const salts = scan ? { salt1: scan.header.salt1, salt2: scan.header.salt2 } : undefined;
    const known = this.meta.salts;
    if (known && (!salts || salts.salt1 !== known.salt1 || salts.salt2 !== known.salt2)) {
      // The WAL this generation lived in is gone: its frames past any archive are lost, and the
      // database file now holds a state no earlier export had. Start over in a new generation.
      const lost = this.loseCurrent(this.committed);
      this.onLost?.(lost);
    }
    if (!scan || scan.committed === 0) {
      this.committed = 0;
      return;
    }
    this.committed = scan.committed;
    if (!this.meta.salts) {
      this.meta = { ...withoutRetired(this.meta), salts };
      saveMeta(this.dir, this.meta);
    }
  }

  private file(kind: "frames", generation?: number): string {
    return path.join(this.dir, generation === undefined ? `current.${kind}` : `${generation}.${kind}`);
  }
}
