import { existsSync, rmSync } from "node:fs";
import Database from "libsql";
import { startFrameLogAt } from "./frame-log-start.js";
import { type ReplicaPosition, replicaPosition, writeReplicaPosition } from "./replica-info.js";

export type { ReplicaPosition };

/** The libSQL replica's own bookkeeping beside its file (sync metadata, its WAL index). */
const REPLICA_COMPANIONS = ["-info", "-client_wal_index"];

/**
 * Turns a libSQL embedded replica (closed by its worker) into a primary's file: its WAL is folded
 * into the file, the replica's bookkeeping goes, and its frame log starts at the generation after
 * the one it followed, so replicas of the old primary can't take its frames for the new one's.
 * Returns where the replica stood (undefined for a replica that never synced).
 */
export function promoteReplicaFile(dbPath: string): ReplicaPosition | undefined {
  const position = replicaPosition(dbPath);
  const db = new Database(dbPath, { fileMustExist: true });
  try {
    // `exec`, not a prepared statement: a statement would keep the connection open past close()
    // until collected, and its late close would delete the WAL of the primary serving this file.
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  for (const s of [...REPLICA_COMPANIONS, "-wal", "-shm"]) rmSync(dbPath + s, { force: true });
  if (!existsSync(`${dbPath}.log`)) {
    startFrameLogAt(dbPath, { generation: (position?.generation ?? 0) + 1, index: 0 });
  }
  return position;
}

/**
 * Undoes `promoteReplicaFile` for a file no one opened since (its promotion couldn't be recorded):
 * the file goes back to being a replica standing at `position`, with its frame log gone. Its
 * content is the replica's at that point (the promotion only folded its WAL in), so it follows
 * its primary again from the next frame.
 */
export function unpromoteReplicaFile(dbPath: string, position: ReplicaPosition): void {
  rmSync(`${dbPath}.log`, { recursive: true, force: true });
  writeReplicaPosition(dbPath, position);
}
