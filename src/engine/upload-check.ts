import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { PAGE_SIZE } from "./wal.js";

/** An uploaded file that can't become a hosted database, with what to do about it. */
export class UploadRejectedError extends Error {}

const MAGIC = "SQLite format 3\u0000";

/**
 * Checks the header of an uploaded SQLite file against what a hosted database must be, the rules
 * Turso documents for uploads: 4096-byte pages (replication ships whole 4 KiB pages), no reserved
 * bytes (Shoal doesn't encrypt at rest, so there is no cipher to make room for), auto-vacuum off
 * and UTF-8 text. The file must be exactly as long as its pages. WAL mode is not required: the
 * file is switched to WAL when installed. SQLite's own check of the content comes after this.
 */
export function checkUploadHeader(file: string): void {
  const fd = openSync(file, "r");
  let size: number;
  const head = Buffer.alloc(100);
  try {
    size = fstatSync(fd).size;
    if (size < 100 || readSync(fd, head, 0, 100, 0) < 100 || head.toString("latin1", 0, 16) !== MAGIC) {
      throw new UploadRejectedError("the file is not a SQLite database (it lacks the SQLite header)");
    }
  } finally {
    closeSync(fd);
  }
  const raw = head.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize !== PAGE_SIZE) {
    throw new UploadRejectedError(
      `the database uses ${pageSize}-byte pages and must use 4096: run "PRAGMA journal_mode = DELETE; PRAGMA page_size = 4096; VACUUM;" on it first`,
    );
  }
  const [write, read] = [head[18]!, head[19]!];
  if (write < 1 || write > 2 || read < 1 || read > 2) {
    throw new UploadRejectedError(`unsupported SQLite file format (read/write versions ${read}/${write})`);
  }
  if (head[20] !== 0) {
    throw new UploadRejectedError(
      `the database reserves ${head[20]} bytes per page (an encrypted database?); Shoal needs 0 reserved bytes: run ".filectrl reserve_bytes 0" and "VACUUM;" in sqlite3 first`,
    );
  }
  if (head.readUInt32BE(52) !== 0) {
    throw new UploadRejectedError(
      'the database must have auto-vacuum off: run "PRAGMA auto_vacuum = 0; VACUUM;" on it first',
    );
  }
  const encoding = head.readUInt32BE(56);
  if (encoding !== 1 && !(encoding === 0 && size === PAGE_SIZE)) {
    throw new UploadRejectedError("the database must use UTF-8 text encoding (PRAGMA encoding = 'UTF-8')");
  }
  if (size % PAGE_SIZE !== 0) {
    throw new UploadRejectedError(`the file is ${size} bytes, not a whole number of 4096-byte pages`);
  }
  // The page count in the header is trusted only when written by a SQLite that maintains it.
  const pages = head.readUInt32BE(28);
  if (head.readUInt32BE(92) === head.readUInt32BE(24) && pages !== 0 && pages * PAGE_SIZE !== size) {
    throw new UploadRejectedError(
      `the file holds ${size / PAGE_SIZE} pages but its header says ${pages}: it was cut short or has trailing data (upload it after "PRAGMA wal_checkpoint(TRUNCATE)", with no -wal file left)`,
    );
  }
}
