import { existsSync, readFileSync, rmSync } from "node:fs";
import Database from "libsql";
import { startFrameLogAt } from "./frame-log-start.js";

/** Where a replica stood in its old primary's history: generation and frame within it. */
export interface ReplicaPosition {
  generation: number;
  frame: number;
}

/** The libSQL replica's own bookkeeping beside its file (sync metadata, its WAL index). */
const REPLICA_COMPANIONS = ["-info", "-client_wal_index"];

/** Where a libSQL embedded replica stands, from its `-info` file; undefined without one. */
export function replicaPosition(dbPath: string): ReplicaPosition | undefined {
  try {
    const info = JSON.parse(readFileSync(`${dbPath}-info`, "utf8")) as {
      generation?: unknown;
      durable_frame_num?: unknown;
    };
    if (typeof info.generation !== "number" || typeof info.durable_frame_num !== "number") return undefined;
    return { generation: info.generation, frame: info.durable_frame_num };
  } catch {
    return undefined;
  }
}

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
