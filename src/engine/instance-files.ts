import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import Database from "libsql";
import type { DatabaseKey } from "./encryption/keys.js";
import { keyOptions } from "./encryption/open.js";

/**
 * Files kept beside a database file: SQLite's, the frame log's folder, and the metadata libSQL's
 * embedded-replica client keeps for a replica, and what a keyless follower keeps (an encrypted
 * database's replica: its position and frames in transit).
 */
export const COMPANIONS = [
  "",
  "-wal",
  "-shm",
  "-journal",
  "-info",
  "-client_wal_index",
  ".log",
  ".upload",
  ".follow",
  ".follow.tmp",
  ".pending",
  ".bootstrap",
];
const ID = /^[0-9a-f-]{36}$/;
/** A database file or one of its companions, named by the database id. */
const INSTANCE_FILE =
  /^([0-9a-f-]{36})\.db(?:-wal|-shm|-journal|-info|-client_wal_index|\.log|\.upload|\.follow|\.follow\.tmp|\.pending|\.bootstrap)?$/;

/** The database id of an instance file's path (`.../<location>/<id>.db`), as `path` names it. */
export function dbIdOfPath(file: string): string {
  const name = file.slice(file.lastIndexOf("/") + 1);
  return name.endsWith(".db") ? name.slice(0, -3) : name;
}

/**
 * The database files of every instance on this node: `<root>/<location>/<databaseId>.db`.
 * Files are named by database id, never by name, so renames and transfers don't move them.
 */
export class InstanceFiles {
  /** The locations folder (`<data>/locations`). */
  constructor(readonly root: string) {}

  path(location: string, dbId: string): string {
    if (!ID.test(dbId)) throw new Error(`not a database id: ${dbId}`);
    return path.join(this.root, location, `${dbId}.db`);
  }

  exists(location: string, dbId: string): boolean {
    try {
      return statSync(this.path(location, dbId)).isFile();
    } catch {
      return false;
    }
  }

  /** Bytes the instance occupies on disk: the database file and its write-ahead log. */
  sizeOf(location: string, dbId: string): number {
    const file = this.path(location, dbId);
    let total = 0;
    for (const suffix of ["", "-wal"]) {
      try {
        total += statSync(file + suffix).size;
      } catch {
        // A missing WAL just means everything is checkpointed.
      }
    }
    return total;
  }

  /** Latest modification time in ms of an instance's file and companions; undefined when it has none. */
  modifiedAt(location: string, dbId: string): number | undefined {
    const file = this.path(location, dbId);
    let latest: number | undefined;
    for (const suffix of COMPANIONS) {
      try {
        const m = statSync(file + suffix).mtimeMs;
        if (latest === undefined || m > latest) latest = m;
      } catch {
        // Not there.
      }
    }
    return latest;
  }

  /** Creates an empty libSQL database in WAL mode with 4 KiB pages (the page size replicas expect). */
  create(location: string, dbId: string, key?: DatabaseKey): void {
    const file = this.path(location, dbId);
    mkdirSync(path.dirname(file), { recursive: true });
    const db = new Database(file, keyOptions(key));
    try {
      db.exec("PRAGMA page_size = 4096");
      db.exec("PRAGMA journal_mode = WAL");
    } finally {
      db.close();
    }
  }

  /**
   * Copies a consistent snapshot of one instance into another location. `VACUUM INTO` reads inside
   * a transaction, so a writer on the source can't tear the copy.
   */
  copy(fromLocation: string, toLocation: string, dbId: string): void {
    const src = this.path(fromLocation, dbId);
    const dst = this.path(toLocation, dbId);
    mkdirSync(path.dirname(dst), { recursive: true });
    this.remove(toLocation, dbId);
    const db = new Database(src, { fileMustExist: true });
    try {
      // `exec` with the path as a literal: a prepared statement would keep this connection to a
      // file its shard serves open past close(), until collected (see handle-release.ts).
      db.exec(`VACUUM INTO '${dst.replaceAll("'", "''")}'`);
    } finally {
      db.close();
    }
    // VACUUM INTO writes a rollback-journal database; instances are WAL databases.
    const copy = new Database(dst);
    try {
      copy.exec("PRAGMA journal_mode = WAL");
    } finally {
      copy.close();
    }
  }

  /** Removes an instance's file and its companions; missing files are fine (removal is idempotent). */
  remove(location: string, dbId: string): void {
    const file = this.path(location, dbId);
    for (const suffix of COMPANIONS) rmSync(file + suffix, { force: true, recursive: true });
  }

  /** Locations that have a folder on this node. */
  locations(): string[] {
    try {
      return readdirSync(this.root, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      return [];
    }
  }

  /** Database ids that have a file in a location: the database file, or only some of its companions. */
  idsIn(location: string): string[] {
    try {
      const ids = readdirSync(path.join(this.root, location)).map((f) => INSTANCE_FILE.exec(f)?.[1]);
      return [...new Set(ids.filter((id): id is string => id !== undefined))];
    } catch {
      return [];
    }
  }
}
