import type { SchemaChange } from "../engine/schema-journal.js";
import type { DatabaseWithPlacement } from "../store/databases.js";

/** Where a primary's committed history stands: generation, frame within it, global index. */
export interface FramePosition {
  generation: number;
  frame: number;
  index: number;
}

/**
 * What the node's services ask of hosted databases' running state: connections, write lock and
 * frame log. That state lives in the one process serving the database (the shard owning it,
 * `src/shards/`), so each of these is a request to that process, not a reach into shared maps;
 * `LocalRuntimes` (local-runtimes.ts) is how the serving process answers them.
 */
export interface DatabaseRuntimes {
  /**
   * Retires the primary of `dbId` in `location` (connections, frame log) and deletes its files;
   * with `keepFiles`, leaves them for the caller to keep (a deleted database kept restorable).
   */
  remove(location: string, dbId: string, keepFiles?: boolean): Promise<void>;
  /** Where the primary's history stands (its frame log is read from disk if it wasn't open). */
  position(location: string, dbId: string): Promise<FramePosition>;
  /** Applies one schema change to a schema database's child, under its write lock. */
  applySchemaChange(child: DatabaseWithPlacement, change: SchemaChange): Promise<string | undefined>;
  /** Puts a checked upload in place of a database's empty primary (at `path`), under its write lock. */
  swapUpload(dbId: string, path: string, file: string, name: string): Promise<void>;
  /** Puts a file restored from the bucket in place of a primary, under its write lock. */
  swapRestored(
    dbId: string,
    dbPath: string,
    restored: string,
    next: { generation: number; index: number },
    name: string,
  ): Promise<boolean>;
}
