import { type Clock, systemClock } from "../lib/time.js";
import type { QueryStatsDelta, UsageDelta } from "../store/usage.js";

/** What query statistics show for every statement of an encrypted database. */
export const ENCRYPTED_QUERY_LABEL = "(statement text not kept: the database is encrypted)";
/** Longest query text kept in statistics; longer texts are cut (with a marker). */
const MAX_QUERY_TEXT = 2000;
/** Distinct queries kept between flushes, so a client sending unique texts can't grow memory without bound. */
const MAX_PENDING_QUERIES = 10_000;

/** One statement counted: its database, text, rows and time. */
export interface StatementRecord {
  dbId: string;
  sql: string;
  rowsRead: number;
  rowsWritten: number;
  ms: number;
}

/** Counts taken out of a tally, to be written to the store (or merged into another tally). */
export interface UsageBatch {
  usage: UsageDelta[];
  queries: QueryStatsDelta[];
  /** `<db>|<day>` keys whose statements wrote, with the location written: sizes are measured at the flush. */
  written: Array<[string, string]>;
}

/** Where statements are counted: the node's usage meter, or a shard's tally it collects. */
export interface UsageRecorder {
  /**
   * `db.location`: the primary the statement ran on, given when it may have written. For an
   * `encrypted` database the statement text (literals and all) is not kept: its statements are
   * counted under one label, so the control plane holds none of the data the key protects.
   */
  record(
    db: { id: string; orgId: string; location?: string; encrypted?: boolean },
    statement: string,
    rowsRead: number,
    rowsWritten: number,
    ms: number,
  ): void;
}

/**
 * Rows read, rows written and queries per database and day, and statistics per query text, as
 * statements run, in memory: a statement never waits for the control plane. `take` empties it.
 */
export class UsageTally implements UsageRecorder {
  private usage = new Map<string, UsageDelta>();
  /** Per database, then per query text: no key strings built from the SQL on every statement. */
  private queries = new Map<string, Map<string, QueryStatsDelta>>();
  private pendingQueries = 0;
  private written = new Map<string, string>();
  private readonly statementListeners: Array<(s: StatementRecord) => void> = [];
  /** The UTC day counts go to, and when it ends: computed once a day, not at every statement. */
  private day = "";
  private dayEnds = 0;
  /** Today's counts of each database seen today, found by its id alone (see `record`). */
  private todays = new Map<string, { key: string; usage: UsageDelta }>();

  constructor(private readonly clock: Clock) {}

  private today(): string {
    // The system clock's time without building a Date: this runs for every statement.
    const now = this.clock === systemClock ? Date.now() : this.clock().getTime();
    // A clock moved back (tests set it) starts the day again too.
    if (now >= this.dayEnds || now < this.dayEnds - 86_400_000) {
      this.day = new Date(now).toISOString().slice(0, 10);
      this.todays = new Map();
      this.dayEnds = Date.parse(`${this.day}T00:00:00.000Z`) + 86_400_000;
    }
    return this.day;
  }

  record(
    db: { id: string; orgId: string; location?: string; encrypted?: boolean },
    statement: string,
    rowsRead: number,
    rowsWritten: number,
    ms: number,
  ): void {
    // Listeners (metrics) take only the statement's kind from its text, never the text itself.
    for (const fn of this.statementListeners) fn({ dbId: db.id, sql: statement, rowsRead, rowsWritten, ms });
    const day = this.today();
    // By id, not by a `<db>|<day>` key built (and hashed) for every statement.
    let today = this.todays.get(db.id);
    if (!today) {
      const key = `${db.id}|${day}`;
      let usage = this.usage.get(key);
      if (!usage) {
        usage = { dbId: db.id, orgId: db.orgId, day, rowsRead: 0, rowsWritten: 0, queries: 0 };
        this.usage.set(key, usage);
      }
      today = { key, usage };
      this.todays.set(db.id, today);
    }
    const { key, usage: u } = today;
    u.rowsRead += rowsRead;
    u.rowsWritten += rowsWritten;
    u.queries += 1;
    if (rowsWritten > 0 && db.location) this.written.set(key, db.location);
    const sql = db.encrypted ? ENCRYPTED_QUERY_LABEL : statement;
    let perDb = this.queries.get(db.id);
    if (!perDb) {
      perDb = new Map();
      this.queries.set(db.id, perDb);
    }
    let q = perDb.get(sql);
    if (!q) {
      if (this.pendingQueries >= MAX_PENDING_QUERIES) return;
      const query = sql.length > MAX_QUERY_TEXT ? `${sql.slice(0, MAX_QUERY_TEXT)}…` : sql;
      q = { dbId: db.id, query, count: 0, rowsRead: 0, rowsWritten: 0, totalMs: 0 };
      perDb.set(sql, q);
      this.pendingQueries++;
    }
    q.count += 1;
    q.rowsRead += rowsRead;
    q.rowsWritten += rowsWritten;
    q.totalMs += ms;
  }

  /** Calls `fn` with every statement as it is counted (metrics); it must be quick and not throw. */
  onRecord(fn: (s: StatementRecord) => void): void {
    this.statementListeners.push(fn);
  }

  get empty(): boolean {
    return this.usage.size === 0 && this.queries.size === 0;
  }

  /** Everything counted so far; the tally starts again from nothing. */
  take(): UsageBatch {
    const batch: UsageBatch = {
      usage: [...this.usage.values()],
      queries: [...this.queries.values()].flatMap((m) => [...m.values()]),
      written: [...this.written],
    };
    this.usage = new Map();
    this.todays = new Map();
    this.queries = new Map();
    this.pendingQueries = 0;
    this.written = new Map();
    return batch;
  }

  /** Adds counts taken elsewhere (another process's tally, or a flush that failed). */
  merge(batch: UsageBatch): void {
    for (const u of batch.usage) {
      const key = `${u.dbId}|${u.day}`;
      const cur = this.usage.get(key);
      if (!cur) this.usage.set(key, { ...u });
      else {
        cur.rowsRead += u.rowsRead;
        cur.rowsWritten += u.rowsWritten;
        cur.queries += u.queries;
        cur.storageBytes ??= u.storageBytes;
      }
    }
    for (const q of batch.queries) {
      let perDb = this.queries.get(q.dbId);
      if (!perDb) {
        perDb = new Map();
        this.queries.set(q.dbId, perDb);
      }
      const cur = perDb.get(q.query);
      if (!cur) {
        perDb.set(q.query, { ...q });
        this.pendingQueries++;
      } else {
        cur.count += q.count;
        cur.rowsRead += q.rowsRead;
        cur.rowsWritten += q.rowsWritten;
        cur.totalMs += q.totalMs;
      }
    }
    for (const [key, location] of batch.written) this.written.set(key, location);
  }
}
