import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";

/** Committed frames of a WAL and the salts of its cycle, as SQLite's wal-index records them. */
export interface WalIndexState {
  committed: number;
  salt1: number;
  salt2: number;
}

/** The wal-index header (https://sqlite.org/walformat.html#the_wal_index_file_format): two copies of 48 bytes. */
const HEADER_BYTES = 48;
/** Its iVersion field, unchanged since SQLite 3.7.0. */
const WALINDEX_VERSION = 3007000;
const LITTLE_ENDIAN = endianness() === "LE";

/**
 * Reads how many frames of a database's WAL are committed from the wal-index header in its
 * `-shm` file: one 96-byte read on a descriptor kept open, where scanning the WAL's frame headers
 * costs an open, a stat, a read per new frame and a close after every commit. SQLite updates the
 * header before a commit returns, writing the second copy first, so the two copies agree except
 * while a writer is midway; then, and whenever the file is missing or replaced (SQLite deletes it
 * when a database's last connection closes), `read` says nothing and the caller scans the WAL.
 */
export class WalIndex {
  private fd: number | undefined;
  private readonly buf = Buffer.alloc(2 * HEADER_BYTES);
  /** The header as last read, to tell a live file from one SQLite unlinked (see `read`). */
  private last: WalIndexState | undefined;

  constructor(private readonly shmPath: string) {}

  /**
   * The header's state. A header that changed since the last read is from a live file: nothing
   * writes to one SQLite has unlinked. Only an unchanged one costs a `fstat` to see whether the
   * file is still the database's, which after each commit spared one system call of three.
   */
  read(): WalIndexState | undefined {
    if (this.fd !== undefined) {
      const state = this.header();
      if (state && this.last && !sameState(state, this.last)) return this.keep(state);
      if (fstatSync(this.fd).nlink > 0) return this.keep(state);
      this.close();
    }
    try {
      this.fd = openSync(this.shmPath, "r");
    } catch {
      return undefined;
    }
    return this.keep(this.header());
  }

  /**
   * The committed frames as the header gives them, in the shape of a WAL scan: what scanning the
   * WAL would find, for one read. An empty or unreadable index leaves the answer to the scan.
   */
  scan(): { committed: number; header: { salt1: number; salt2: number } } | undefined {
    const state = this.read();
    if (!state || state.committed === 0) return undefined;
    return { committed: state.committed, header: { salt1: state.salt1, salt2: state.salt2 } };
  }

  close(): void {
    this.last = undefined;
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  private keep(state: WalIndexState | undefined): WalIndexState | undefined {
    this.last = state;
    return state;
  }

  private header(): WalIndexState | undefined {
    const b = this.buf;
    if (readSync(this.fd!, b, 0, b.length, 0) < b.length) return undefined;
    if (b.compare(b, HEADER_BYTES, 2 * HEADER_BYTES, 0, HEADER_BYTES) !== 0) return undefined;
    const version = LITTLE_ENDIAN ? b.readUInt32LE(0) : b.readUInt32BE(0);
    // isInit (byte 12) is set once the header is valid.
    if (version !== WALINDEX_VERSION || b[12] !== 1) return undefined;
    // Native byte order, except the salts: copied as they are from the WAL header (big-endian).
    const committed = LITTLE_ENDIAN ? b.readUInt32LE(16) : b.readUInt32BE(16);
    return { committed, salt1: b.readUInt32BE(32), salt2: b.readUInt32BE(36) };
  }
}

function sameState(a: WalIndexState, b: WalIndexState): boolean {
  return a.committed === b.committed && a.salt1 === b.salt1 && a.salt2 === b.salt2;
}
