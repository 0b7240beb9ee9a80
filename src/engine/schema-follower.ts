import type Database from "libsql";
import type { Prepared } from "./prepared.js";

/**
 * A count of the statements that may have changed one database's schema, shared by every
 * connection this process has open to it. A connection reads the schema version (a statement of
 * its own, which cost about as much as the single-row insert it guarded) only when this count
 * moved since it last read it.
 *
 * That holds because a database's schema changes only through this process's connections to it:
 * a shard owns its databases' files (ADR 0020), and what replaces a file whole (an upload, a
 * restore) closes those connections first, so the next ones start without a known version. A
 * change made behind its back by another program is still caught when a statement fails to
 * compile (`SchemaFollower.compile`), as SQLite itself catches a missing table.
 */
export class SchemaEpoch {
  private count = 0;

  get current(): number {
    return this.count;
  }

  /** Called before and after anything that may change the schema runs. */
  moved(): void {
    this.count++;
  }
}

/**
 * Whether running `p` may change the schema: anything but a plain read or a row change (DDL,
 * VACUUM, PRAGMAs, and the COMMIT or ROLLBACK that ends a transaction which changed it).
 */
export function mayChangeSchema(p: Prepared): boolean {
  return !p.info.isDml && !(p.readonly && p.info.kind === "read");
}

/**
 * Keeps one connection's view of the schema current. SQLite re-prepares a cached statement whose
 * schema changed when it runs, but compiles a new statement against the schema it last loaded, so
 * after another connection's `DROP TABLE t; CREATE TABLE t(a, b)` an idle pooled connection
 * refused `INSERT INTO t VALUES (1, 2)` with "table t has 1 columns". What the connection's cache
 * learned (columns, parameters, whether a program is bounded) may be stale too.
 */
export class SchemaFollower {
  private stmt: Database.Statement | undefined;
  /** The schema version the connection's cache was built on; -1 until the first read. */
  private version = -1;
  /** The epoch when the version was last read. */
  private seen = -1;
  /**
   * Set once the version was read inside the open transaction: its snapshot hides other
   * connections' changes, so only this connection's own statements can move it until it ends.
   */
  private held = false;

  constructor(
    private readonly db: Database.Database,
    readonly epoch: SchemaEpoch,
  ) {
    this.stmt = db.prepare("PRAGMA schema_version").raw(true);
  }

  /** Before a statement that isn't a plain read: the transaction's snapshot no longer fixes the schema. */
  unhold(): void {
    this.held = false;
  }

  /**
   * Reads the version when it may have moved (always when `force`) and, when it did, reloads the
   * schema: one statement that touches it runs, and its schema check does the rest. Answers
   * whether the version was read (or is fixed by the transaction) and whether it changed.
   */
  follow(force: boolean): { read: boolean; changed: boolean } {
    const epoch = this.epoch.current;
    if (!force && epoch === this.seen) return { read: false, changed: false };
    if (this.held && this.db.inTransaction) return { read: true, changed: false };
    this.held = this.db.inTransaction;
    const version = (this.stmt!.get() as number[])[0]!;
    this.seen = epoch;
    if (version === this.version) return { read: true, changed: false };
    this.db.exec("SELECT 1 FROM sqlite_schema LIMIT 0");
    // Read before reloading: a change committed in between shows as a new version next time.
    this.version = version;
    return { read: true, changed: true };
  }

  /** Lets go of its statement, so the connection can really close (see handle-release.ts). */
  close(): void {
    this.stmt = undefined;
  }
}
