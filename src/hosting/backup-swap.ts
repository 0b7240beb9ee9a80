import { existsSync, renameSync, rmSync } from "node:fs";
import { clusterErrors } from "../domain/cluster/errors.js";
import { startFrameLogAt } from "../engine/frame-log-start.js";
import { flushClosing } from "../engine/handle-release.js";
import type { HostedDatabases } from "../engine/hosted-databases.js";
import { removeDatabaseFile } from "../engine/snapshot.js";

/** How long a swap waits for the database's writer and open connections to finish. */
const DRAIN_MS = 10_000;

export interface SwapPorts {
  hosted: Pick<HostedDatabases, "at">;
}

/** Where the restored file's log starts: after the bucket's generations and after the log it replaces. */
type LogStart = { generation: number; index: number };

/**
 * Puts a restored file (`restored`, with no frame log yet) in place of the database at `dbPath`,
 * holding its write lock: open connections are closed first, the old file, WAL and log are moved
 * aside, the new ones renamed in, and only then is the old one deleted; a failure before that
 * puts the old one back. The new log starts at a generation past both the bucket's and the old
 * log's, so neither the bucket's history nor a follower can mistake it for the old one.
 */
export async function swapInRestored(
  deps: SwapPorts,
  dbPath: string,
  restored: string,
  bucketNext: LogStart,
  name: string,
): Promise<boolean> {
  // The restore that built the file (maybe in another process) closed its connections already.
  await flushClosing();
  for (const suffix of ["-wal", "-shm"]) rmSync(restored + suffix, { force: true });
  const db = deps.hosted.at(dbPath);
  const lock = db.writeLock;
  const owner = {};
  try {
    await lock.acquire(owner, DRAIN_MS);
  } catch {
    throw clusterErrors.restoreDrainTimeout(name);
  }
  try {
    if (!(await db.drain(DRAIN_MS))) throw clusterErrors.restoreDrainTimeout(name);
    await flushClosing();
    const replaced = existsSync(dbPath);
    const old = replaced && existsSync(`${dbPath}.log`) ? db.frameLog.position() : undefined;
    startFrameLogAt(restored, {
      generation: Math.max(bucketNext.generation, (old?.generation ?? 0) + 1),
      index: Math.max(bucketNext.index, old?.index ?? 0),
    });
    db.dropFrameLog();
    moveIn(dbPath, restored);
    db.retire();
    return replaced;
  } finally {
    lock.release(owner);
  }
}

/** The renames of the swap; the old files go back if the new ones can't be moved in. */
function moveIn(dbPath: string, restored: string): void {
  const aside = `${restored}.old`;
  const parts = ["", "-wal", ".log"];
  const moved: string[] = [];
  try {
    for (const p of parts) {
      if (!existsSync(dbPath + p)) continue;
      renameSync(dbPath + p, aside + p);
      moved.push(p);
    }
    rmSync(`${dbPath}-shm`, { force: true });
    renameSync(`${restored}.log`, `${dbPath}.log`);
    renameSync(restored, dbPath);
  } catch (e) {
    rmSync(`${dbPath}.log`, { recursive: true, force: true });
    for (const p of moved) renameSync(aside + p, dbPath + p);
    throw e;
  }
  removeDatabaseFile(aside);
  rmSync(`${aside}.log`, { recursive: true, force: true });
}
