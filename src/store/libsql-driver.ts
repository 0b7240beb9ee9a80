import type { SqliteDatabase, SqliteStatement } from "kysely";
import Database from "libsql";

/**
 * Adapts a `libsql` connection to the interface Kysely's SQLite dialect expects.
 *
 * Two libsql traits shape this: binding a JS boolean aborts the whole process (a Rust `todo!()`
 * panic, not an exception), so every parameter is normalised first; and preparing is costly, so
 * prepared statements are cached by SQL text (Kysely compiles parameterised SQL, so texts repeat).
 */
export class LibsqlKyselyDatabase implements SqliteDatabase {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly cacheSize = 256,
  ) {}

  close(): void {
    this.cache.clear();
    // Everything into the main file before closing: the statements still cached keep the close
    // from checkpointing by itself, and a stopped instance's control-plane.db alone (copied as a
    // backup, say) must then hold every commit.
    try {
      this.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch {
      // Another connection holds the file (a reader): the WAL stays, and is read with it.
    }
    this.db.close();
  }

  prepare(sql: string): SqliteStatement {
    let stmt = this.cache.get(sql);
    if (stmt) {
      this.cache.delete(sql);
    } else {
      stmt = this.db.prepare(sql);
      if (this.cache.size >= this.cacheSize) {
        const oldest = this.cache.keys().next().value;
        if (oldest !== undefined) this.cache.delete(oldest);
      }
    }
    this.cache.set(sql, stmt);
    const s = stmt;
    return {
      reader: s.reader,
      all: (params) => s.all(...bindable(params)),
      run: (params) => {
        const r = s.run(...bindable(params));
        return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
      },
      iterate: (params) => s.iterate(...bindable(params)),
    };
  }
}

function bindable(params: ReadonlyArray<unknown>): unknown[] {
  return params.map((p) => {
    if (typeof p === "boolean") return p ? 1 : 0;
    if (p instanceof Date) return p.toISOString();
    if (p === undefined) return null;
    if (p !== null && typeof p === "object" && !(p instanceof Uint8Array)) {
      throw new TypeError(`cannot bind a ${p.constructor?.name ?? "object"} to a SQLite parameter`);
    }
    return p;
  });
}

/** Opens the control-plane SQLite file with the pragmas the store relies on. */
export function openControlPlaneFile(file: string): Database.Database {
  const db = new Database(file);
  db.exec("PRAGMA journal_mode = WAL");
  // FULL: a control-plane commit (a new token, a new database) must survive power loss, not
  // only a process crash; these writes are rare enough that the extra fsync is affordable.
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  return db;
}
