import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import path from "node:path";

/** A commit as point-in-time reads find it: the generation's frame count after it, and when. */
export interface CommitTime {
  frames: number;
  at: number;
}

/** How long recorded commit times may wait in memory before they are written out. */
export const COMMIT_TIMES_FLUSH_MS = 50;

/**
 * The commit times of a frame log's generations, a file each in the log's folder: one line
 * `<frames> <ms>` per recorded commit. The current generation's file stays open between commits.
 *
 * Lines are written out at most every COMMIT_TIMES_FLUSH_MS, not as they come: under a stream of
 * single-row inserts, an appending write per event-loop turn cost about as much as the insert's
 * own WAL write. Every reader of the file, and closing it, writes what waits first, so only a
 * process crash can lose lines (those of its last few milliseconds). The frames they stood for
 * survive in the WAL and are recorded with the next commit, at its time.
 */
export class CommitTimes {
  private fd: number | undefined;
  private waiting = "";
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly dir: string) {}

  /** Adds a line to the current generation's file, written out within COMMIT_TIMES_FLUSH_MS. */
  append(frames: number, at: number): void {
    this.waiting += `${frames} ${at}\n`;
    this.timer ??= setTimeout(() => this.flushLater(), COMMIT_TIMES_FLUSH_MS).unref();
  }

  /** Writes the lines waiting in memory to the current generation's file. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiting === "") return;
    this.fd ??= openSync(this.file(), "a");
    writeSync(this.fd, this.waiting);
    this.waiting = "";
  }

  /** Writes what waits and closes the current file's descriptor; the next write opens it again. */
  close(): void {
    try {
      this.flush();
    } catch {
      // A file that can't take its lines: those commits lose their times, never their frames.
      this.waiting = "";
    }
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  /** The current generation ended as `generation`: its file is kept under that number. */
  archive(generation: number): void {
    this.close();
    if (existsSync(this.file())) renameSync(this.file(), this.file(generation));
  }

  /** Forgets the current generation's times (its frames were lost or replaced). */
  dropCurrent(): void {
    this.waiting = "";
    this.close();
    rmSync(this.file(), { force: true });
  }

  /** Forgets an archived generation's times. */
  drop(generation: number): void {
    rmSync(this.file(generation), { force: true });
  }

  /** The times of the current generation (`generation` undefined) or an archived one, oldest first. */
  read(generation?: number): CommitTime[] {
    if (generation === undefined) this.flush();
    const file = this.file(generation);
    if (!existsSync(file)) return [];
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [frames, at] = line.split(" ");
        return { frames: Number(frames), at: Number(at) };
      });
  }

  private flushLater(): void {
    this.timer = undefined;
    try {
      this.flush();
    } catch {
      // Kept in memory: the next line, reader or close tries again.
    }
  }

  private file(generation?: number): string {
    return path.join(this.dir, generation === undefined ? "current.commits" : `${generation}.commits`);
  }
}
