import { statfsSync } from "node:fs";
import type { DiskState } from "../domain/core/disk.js";

/** How long a reading is used before the filesystem is asked again. */
const READ_EVERY_MS = 1000;

/**
 * The free space of the filesystem the data folder is on, read at most once a second (one
 * `statfs`, only when someone asks): the data plane asks on each write that would grow a
 * database, the management API before it makes files, the metrics at each scrape.
 *
 * The reserve is room kept for what must still work when a tenant fills the disk: reads,
 * `DELETE`, `DROP` and `VACUUM` (how a tenant gets out), the control plane's own store and Shoal's
 * bookkeeping (frame logs, usage), and an operator's cleanup. A write that a reading a second
 * old let through may still meet a full disk: SQLite then refuses it (`SQLITE_FULL`), uncommitted.
 */
export class DiskSpace {
  private last: DiskState | undefined;
  private readAt = 0;

  constructor(
    private readonly dir: string,
    readonly reserveBytes: number,
    /** Told when free space goes below the reserve and when it is back above it. */
    private readonly onChange?: (state: DiskState) => void,
  ) {}

  /** The state, read again when `fresh` or when the last reading is a second old. */
  now(fresh = false): DiskState {
    const at = performance.now();
    if (this.last && !fresh && at - this.readAt < READ_EVERY_MS) return this.last;
    this.readAt = at;
    const was = this.last;
    this.last = this.read() ??
      was ?? { freeBytes: 0, totalBytes: 0, reserveBytes: this.reserveBytes, low: false };
    if (was && was.low !== this.last.low) this.onChange?.(this.last);
    else if (!was && this.last.low) this.onChange?.(this.last);
    return this.last;
  }

  /** Whether free space is below the reserve (never, without a reserve). */
  get low(): boolean {
    return this.reserveBytes > 0 && this.now().low;
  }

  private read(): DiskState | undefined {
    try {
      const s = statfsSync(this.dir);
      const freeBytes = s.bavail * s.bsize;
      return {
        freeBytes,
        totalBytes: s.blocks * s.bsize,
        reserveBytes: this.reserveBytes,
        low: this.reserveBytes > 0 && freeBytes < this.reserveBytes,
      };
    } catch {
      // The folder can't be read (gone, or not mounted): the last reading stands.
      return undefined;
    }
  }
}
