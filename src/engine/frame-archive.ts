import { closeSync, openSync, readdirSync, readSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { FRAME_BYTES, readWalFrames, WAL_HEADER_BYTES } from "./wal.js";

// A finished generation's archive holds its frames back to back, without the WAL's header.

/** Frames read and written per step of the background copy (about 1 MiB). */
const CHUNK_FRAMES = 256;
/** Tells apart the copies of one process, so a dropped copy never writes into a later one's file. */
let copies = 0;

/**
 * A generation's frames copied into the file that becomes its archive, ahead of the rollover that
 * ends it, on libuv's threads while writes go on. Copied inside the rollover, 4,000 frames (16 MB)
 * cost each single-row insert about 20 µs of the thread that runs statements. What is copied stays true: committed frames don't change until the checkpoint that
 * ends their generation, and only the rollover makes that checkpoint; a checkpoint made behind
 * Shoal's back starts a new generation, and a copy for another generation is never used.
 *
 * The copy ends by flushing the WAL to disk, also in the background. The rollover's checkpoint
 * flushes the WAL first, and with 16 MB to write that was about 65 of a checkpoint's 90 ms (after
 * 4,000 single-row inserts, on a VM's disk), all of it holding the statement thread; after this
 * flush, the checkpoint's has only the frames committed since.
 */
export class ArchiveCopy {
  private state: "copying" | "done" | "dropped" = "copying";

  private constructor(
    readonly generation: number,
    /** Frames 1..frames of the generation, once done. */
    readonly frames: number,
    readonly file: string,
  ) {}

  /** Starts copying frames 1..`frames` of `walPath` into a new file in the log's folder `dir`. */
  static start(walPath: string, dir: string, generation: number, frames: number): ArchiveCopy {
    copies += 1;
    const copy = new ArchiveCopy(generation, frames, path.join(dir, `${generation}.frames.${copies}.copy`));
    copy.copy(walPath).then(
      () => {
        // Dropped while its last step ran: that step may have made the file again.
        if (copy.state === "copying") copy.state = "done";
        else copy.drop();
      },
      () => copy.drop(),
    );
    return copy;
  }

  /** Removes the copies a stopped process left in the log's folder `dir`. */
  static sweep(dir: string): void {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) if (name.endsWith(".copy")) rmSync(path.join(dir, name), { force: true });
  }

  /** Whether the copy finished for `generation`, whose committed frames now number `committed`. */
  readyFor(generation: number, committed: number): boolean {
    return this.state === "done" && this.generation === generation && this.frames <= committed;
  }

  /**
   * Adds frames frames+1..`committed` from the live WAL, small by then and read under the write
   * lock, and returns the finished file.
   */
  finish(walPath: string, committed: number): string {
    if (committed > this.frames) {
      const fd = openSync(this.file, "r+");
      try {
        writeSync(
          fd,
          readWalFrames(walPath, this.frames + 1, committed + 1),
          0,
          undefined,
          this.frames * FRAME_BYTES,
        );
      } finally {
        closeSync(fd);
      }
    }
    return this.file;
  }

  /** Gives the copy up and removes its file; a step still under way stops at its end. */
  drop(): void {
    this.state = "dropped";
    rmSync(this.file, { force: true });
  }

  private async copy(walPath: string): Promise<void> {
    const source = await open(walPath, "r");
    try {
      const target = await open(this.file, "w");
      try {
        const buffer = Buffer.allocUnsafe(CHUNK_FRAMES * FRAME_BYTES);
        for (let done = 0; done < this.frames && this.state === "copying"; done += CHUNK_FRAMES) {
          const bytes = Math.min(CHUNK_FRAMES, this.frames - done) * FRAME_BYTES;
          const { bytesRead } = await source.read(buffer, 0, bytes, WAL_HEADER_BYTES + done * FRAME_BYTES);
          if (bytesRead !== bytes) throw new Error(`the WAL ended before frame ${this.frames}`);
          const { bytesWritten } = await target.write(buffer, 0, bytes, done * FRAME_BYTES);
          if (bytesWritten !== bytes) throw new Error("the archive copy was cut short");
        }
      } finally {
        await target.close();
      }
      await source.datasync().catch(() => undefined);
    } finally {
      await source.close();
    }
  }
}

/**
 * A file holding frames 1..`frames` of the live WAL's generation, to become its archive: `copy`
 * finished with the frames committed since, when it is ready for them, else a whole new copy
 * written to `wholePath` now.
 */
export function archiveFrames(
  copy: ArchiveCopy | undefined,
  walPath: string,
  generation: number,
  frames: number,
  wholePath: string,
): string {
  if (copy?.readyFor(generation, frames)) {
    try {
      return copy.finish(walPath, frames);
    } catch {
      // Copied whole below instead.
    }
  }
  copy?.drop();
  writeFileSync(wholePath, readWalFrames(walPath, 1, frames + 1));
  return wholePath;
}

/** Frames `start`..`stop - 1` (1-based) of an archive file. */
export function readArchive(file: string, start: number, stop: number): Buffer {
  const data = Buffer.alloc((stop - start) * FRAME_BYTES);
  const fd = openSync(file, "r");
  try {
    readSync(fd, data, 0, data.length, (start - 1) * FRAME_BYTES);
  } finally {
    closeSync(fd);
  }
  return data;
}
