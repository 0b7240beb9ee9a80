import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** SQLite's WAL layout (https://sqlite.org/fileformat2.html#walformat). */
export const WAL_HEADER_BYTES = 32;
export const FRAME_HEADER_BYTES = 24;
export const PAGE_SIZE = 4096;
export const FRAME_BYTES = FRAME_HEADER_BYTES + PAGE_SIZE;

export interface WalHeader {
  pageSize: number;
  checkpointSeq: number;
  salt1: number;
  salt2: number;
}

export interface WalScan {
  header: WalHeader;
  /** Frames of the WAL up to and including its last commit frame (SQLite's mxFrame). */
  committed: number;
}

/**
 * Reads the WAL header and counts the committed frames, continuing from `knownCommitted` when the
 * salts are unchanged. Within one WAL cycle (one pair of salts) frames past the last commit can
 * only come from rolled-back transactions, and those never carry a commit marker, so the last
 * frame with matching salts and a non-zero "database size" field is the last committed one.
 * Returns undefined when there is no WAL (or no header yet).
 */
export function scanWal(
  walPath: string,
  knownCommitted = 0,
  knownSalts?: { salt1: number; salt2: number },
): WalScan | undefined {
  return withWal(walPath, (fd) => {
    const size = fstatSync(fd).size;
    const header = readHeader(fd);
    if (!header) return undefined;
    const sameCycle =
      knownSalts !== undefined && knownSalts.salt1 === header.salt1 && knownSalts.salt2 === header.salt2;
    let committed = sameCycle ? knownCommitted : 0;
    const frameHeader = Buffer.alloc(FRAME_HEADER_BYTES);
    const frameBytes = FRAME_HEADER_BYTES + header.pageSize;
    const total = Math.floor((size - WAL_HEADER_BYTES) / frameBytes);
    for (let i = committed; i < total; i++) {
      readSync(fd, frameHeader, 0, FRAME_HEADER_BYTES, WAL_HEADER_BYTES + i * frameBytes);
      if (frameHeader.readUInt32BE(8) !== header.salt1 || frameHeader.readUInt32BE(12) !== header.salt2)
        break;
      if (frameHeader.readUInt32BE(4) !== 0) committed = i + 1;
    }
    return { header, committed };
  });
}

/** A WAL's header, or undefined when it has none yet (an empty file) or isn't a WAL. */
function readHeader(fd: number): WalHeader | undefined {
  const head = Buffer.alloc(WAL_HEADER_BYTES);
  if (readSync(fd, head, 0, WAL_HEADER_BYTES, 0) < WAL_HEADER_BYTES) return undefined;
  const magic = head.readUInt32BE(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return undefined;
  return {
    pageSize: head.readUInt32BE(8),
    checkpointSeq: head.readUInt32BE(12),
    salt1: head.readUInt32BE(16),
    salt2: head.readUInt32BE(20),
  };
}

/** The salts in a WAL's header: which cycle its frames belong to. Undefined without a header. */
export function walSalts(walPath: string): { salt1: number; salt2: number } | undefined {
  return withWal(walPath, (fd) => {
    const header = readHeader(fd);
    return header && { salt1: header.salt1, salt2: header.salt2 };
  });
}

/** `read` on the WAL opened for reading, or undefined when there is no WAL. */
function withWal<T>(walPath: string, read: (fd: number) => T | undefined): T | undefined {
  let fd: number;
  try {
    fd = openSync(walPath, "r");
  } catch {
    return undefined;
  }
  try {
    return read(fd);
  } finally {
    closeSync(fd);
  }
}

/** Reads frames `start`..`end - 1` (1-based) of a WAL, whole frames only. */
export function readWalFrames(walPath: string, start: number, end: number, pageSize = PAGE_SIZE): Buffer {
  const frameBytes = FRAME_HEADER_BYTES + pageSize;
  const fd = openSync(walPath, "r");
  try {
    const out = Buffer.alloc((end - start) * frameBytes);
    const read = readSync(fd, out, 0, out.length, WAL_HEADER_BYTES + (start - 1) * frameBytes);
    return out.subarray(0, read - (read % frameBytes));
  } finally {
    closeSync(fd);
  }
}
