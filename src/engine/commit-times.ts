import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import path from "node:path";

/** A commit as point-in-time reads find it: the generation's frame count after it, and when. */
export interface CommitTime {
  frames: number;
  at: number;
}

/**
 * The commit times of a frame log's generations, a file each in the log's folder: one line
 * `<frames> <ms>` per recorded commit. The current generation's file stays open between commits.
 */
export class CommitTimes {
  private fd: number | undefined;

  constructor(private readonly dir: string) {}

  /** Adds a line to the current generation's file. */
  append(frames: number, at: number): void {
    this.fd ??= openSync(this.file(), "a");
    writeSync(this.fd, `${frames} ${at}\n`);
  }

  /** Closes the current file's descriptor; the next `append` opens it again. */
  close(): void {
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
    this.close();
    rmSync(this.file(), { force: true });
  }

  /** Forgets an archived generation's times. */
  drop(generation: number): void {
    rmSync(this.file(generation), { force: true });
  }

  /** The times of the current generation (`generation` undefined) or an archived one, oldest first. */
  read(generation?: number): CommitTime[] {
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

  private file(generation?: number): string {
    return path.join(this.dir, generation === undefined ? "current.commits" : `${generation}.commits`);
  }
}
