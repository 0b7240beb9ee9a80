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
 * `src/shards/`), so each of these is a request to that process, not a reach into shared maps.
 * This is the one declaration: `LocalRuntimes` (local-runtimes.ts) answers it in the serving
 * process, the shards' protocol carries it as it is, and the node routes each call by
 * `RUNTIME_CALLS` (shards/node-shards.ts).
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

/** How a call reaches the process serving its database. */
interface RuntimeCall<A extends unknown[]> {
  /** The id of the database the call is about, from its arguments. */
  database(...args: A): string;
  /** Whether the call may hold the serving process's event loop a while (a file swapped in). */
  long: boolean;
}

/** For each method of `DatabaseRuntimes`, how it is routed. */
export const RUNTIME_CALLS: { [K in keyof DatabaseRuntimes]: RuntimeCall<Parameters<DatabaseRuntimes[K]>> } =
  {
    remove: { database: (_location, dbId) => dbId, long: false },
    position: { database: (_location, dbId) => dbId, long: false },
    applySchemaChange: { database: (child) => child.id, long: false },
    swapUpload: { database: (dbId) => dbId, long: true },
    swapRestored: { database: (dbId) => dbId, long: true },
  };

/** The methods' names, in the order above. */
export const RUNTIME_METHODS = Object.keys(RUNTIME_CALLS) as Array<keyof DatabaseRuntimes>;

/**
 * `runtimes`' methods as a plain object (what crosses a process boundary as a table of methods),
 * each going to `call` with its name and arguments.
 */
export function runtimeMethods(
  call: <K extends keyof DatabaseRuntimes>(
    method: K,
    args: Parameters<DatabaseRuntimes[K]>,
  ) => ReturnType<DatabaseRuntimes[K]>,
): DatabaseRuntimes {
  const out: Record<string, unknown> = {};
  for (const m of RUNTIME_METHODS) out[m] = (...args: never[]) => call(m, args as never);
  return out as unknown as DatabaseRuntimes;
}
