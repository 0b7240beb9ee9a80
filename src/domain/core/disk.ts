import { InsufficientStorageError } from "../../errors.js";

/** The data folder's filesystem as last read, against the reserve (see hosting/disk-space.ts). */
export interface DiskState {
  /** Bytes a process of this user may still write. */
  freeBytes: number;
  totalBytes: number;
  /** `SHOAL_DISK_RESERVE_MB` in bytes; 0: no reserve. */
  reserveBytes: number;
  /** Free space is below the reserve: writes that grow databases, and new databases, are refused. */
  low: boolean;
}

/** The data folder's free space; `fresh` reads it again rather than use the last second's reading. */
export interface DiskSpacePort {
  now(fresh?: boolean): DiskState;
}

/** Free space under which SQLite's SQLITE_FULL is taken as the disk's, not a database's limit. */
const NEARLY_FULL_BYTES = 16 * 1024 * 1024;

/** `bytes` as a person reads it: `412 MB`, `1.5 GB`. */
function sizeText(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  return `${Math.floor(bytes / 1e6)} MB`;
}

/** Why something that needs room was refused, in the same words on every transport. */
export function diskReserveMessage(state: DiskState, what: string): string {
  return (
    `${what} refused: the server's disk has ${sizeText(state.freeBytes)} free, below its reserve of ` +
    `${sizeText(state.reserveBytes)} (SHOAL_DISK_RESERVE_MB); reads, DELETE, DROP and VACUUM still run`
  );
}

/** Refuses (507 DISK_RESERVE_REACHED) a call that would make files while free space is below the reserve. */
export function requireDiskSpace(disk: DiskSpacePort | undefined, what: string): void {
  const state = disk?.now(true);
  if (state?.low) throw new InsufficientStorageError(diskReserveMessage(state, what));
}

/**
 * A failure to write files that came from the disk filling up (`ENOSPC`, or SQLite's
 * `SQLITE_FULL` while free space is below the reserve) as the 507 it is; undefined for any
 * other failure, which stays as it was.
 */
export function diskFullError(
  e: unknown,
  disk: DiskSpacePort | undefined,
  what: string,
): InsufficientStorageError | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  if (code !== "ENOSPC" && code !== "SQLITE_FULL") return undefined;
  const state = disk?.now(true);
  // SQLITE_FULL also means a database reached its own size limit: only a disk that is (nearly)
  // out of room makes it the server's.
  if (code === "SQLITE_FULL" && !(state && (state.low || state.freeBytes < NEARLY_FULL_BYTES)))
    return undefined;
  const message = state ? diskReserveMessage(state, what) : `${what} failed: the server's disk is full`;
  return new InsufficientStorageError(message, code === "ENOSPC" ? "DISK_FULL" : "DISK_RESERVE_REACHED");
}
