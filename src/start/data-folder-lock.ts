import path from "node:path";
import Database from "libsql";
import { StartError } from "../errors.js";

/** The lock file's name inside the data folder. */
export const LOCK_FILE = "shoal.lock";

/** The data folder held by this process until `release()`. */
export interface DataFolderLock {
  release(): void;
}

/**
 * Takes the data folder for this process alone, or answers undefined when another process (or
 * another Shoal in this one) holds it. Two servers on one folder would each append to the same
 * frame logs and hand out the same database files; a copy of the control plane must see one
 * nothing writes to.
 *
 * The lock is an open exclusive transaction on a small SQLite file: SQLite's own file locks, which
 * the operating system drops when the process ends however it ends (`kill -9` included), so a
 * crash never leaves a stale lock behind, and which SQLite also keeps straight between two
 * connections of one process.
 */
export function lockDataFolder(dataDir: string): DataFolderLock | undefined {
  const db = new Database(path.join(dataDir, LOCK_FILE));
  try {
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("BEGIN EXCLUSIVE");
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code === "SQLITE_BUSY") return undefined;
    throw e;
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      db.exec("ROLLBACK");
      db.close();
    },
  };
}

/** This process's hold on the data folder, for a server: a folder another process holds stops the start. */
export function takeDataFolder(dataDir: string): DataFolderLock {
  const lock = lockDataFolder(dataDir);
  if (lock) return lock;
  throw new StartError(
    `another Shoal is running on the data folder ${dataDir} (SHOAL_DATA_DIR); ` +
      "stop it first, or give this server a folder of its own",
    1,
  );
}
