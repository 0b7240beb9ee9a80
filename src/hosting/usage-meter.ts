import type { StoreAccess, UsageFlush } from "../domain/core/ports.js";
import type { Logger } from "../lib/logger.js";
import type { Clock } from "../lib/time.js";
import type { QueryStatsDelta, UsageDelta } from "../store/usage.js";

/** Longest query text kept in statistics; longer texts are cut (with a marker). */
const MAX_QUERY_TEXT = 2000;
/** Distinct queries kept between flushes, so a client sending unique texts can't grow memory without bound. */
const MAX_PENDING_QUERIES = 10_000;

/**
 * Counts rows read, rows written and queries per database as statements run, and writes the counts
 * to the store in batches. Counting is in memory (a statement must not wait for the control plane);
 * `flush` runs on a timer, before usage is read, and at shutdown.
 */
export class UsageMeter implements UsageFlush {
  private usage = new Map<string, UsageDelta>();
  /** Per database, then per query text: no key strings built from the SQL on every statement. */
  private queries = new Map<string, Map<string, QueryStatsDelta>>();
  private pendingQueries = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly listeners: Array<(orgIds: ReadonlySet<string>) => Promise<void>> = [];

  /** Where each pending day's writes went, so the primary's size can be measured at the flush. */
  private written = new Map<string, string>();

  constructor(
    private readonly store: StoreAccess,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** Bytes a database's instance occupies in a location (storage history, per day). */
    private readonly storageOf?: (location: string, dbId: string) => number,
  ) {}

  /** `db.location`: the primary the statement ran on, given when it may have written. */
  record(
    db: { id: string; orgId: string; location?: string },
    sql: string,
    rowsRead: number,
    rowsWritten: number,
    ms: number,
  ): void {
    const day = this.clock().toISOString().slice(0, 10);
    const key = `${db.id}|${day}`;
    let u = this.usage.get(key);
    if (!u) {
      u = { dbId: db.id, orgId: db.orgId, day, rowsRead: 0, rowsWritten: 0, queries: 0 };
      this.usage.set(key, u);
    }
    u.rowsRead += rowsRead;
    u.rowsWritten += rowsWritten;
    u.queries += 1;
    if (rowsWritten > 0 && db.location) this.written.set(key, db.location);

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

  /**
   * Runs `fn` after every flush, even one with nothing to write, with the organizations whose
   * counts that flush stored (plan quotas are judged there). A flush settles once `fn` has.
   */
  afterFlush(fn: (orgIds: ReadonlySet<string>) => Promise<void>): void {
    this.listeners.push(fn);
  }

  /** Writes pending counts in one transaction; on failure they are kept for the next attempt. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const orgIds = new Set<string>();
      if (this.usage.size > 0 || this.queries.size > 0) {
        const usage = this.usage;
        this.measureStorage(usage);
        const queries = [...this.queries.values()].flatMap((m) => [...m.values()]);
        this.usage = new Map();
        this.queries = new Map();
        this.pendingQueries = 0;
        try {
          await this.store.write(async (r) => {
            await r.usage.add([...usage.values()]);
            await r.usage.addQueryStats(queries);
          });
          for (const u of usage.values()) orgIds.add(u.orgId);
        } catch (e) {
          this.log.error({ err: e }, "could not record usage; will retry");
          this.mergeBack(usage, queries);
        }
      }
      for (const fn of this.listeners) {
        try {
          await fn(orgIds);
        } catch (e) {
          this.log.error({ err: e }, "a usage listener failed; the next flush tries again");
        }
      }
    });
    return this.flushing;
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  /** Sizes of the primaries written since the last flush, taken after those writes. */
  private measureStorage(usage: Map<string, UsageDelta>): void {
    const written = this.written;
    this.written = new Map();
    if (!this.storageOf) return;
    for (const [key, location] of written) {
      const u = usage.get(key);
      if (u) u.storageBytes = this.storageOf(location, u.dbId);
    }
  }

  private mergeBack(usage: Map<string, UsageDelta>, queries: QueryStatsDelta[]): void {
    for (const [k, u] of usage) {
      const cur = this.usage.get(k);
      if (!cur) this.usage.set(k, u);
      else {
        cur.rowsRead += u.rowsRead;
        cur.rowsWritten += u.rowsWritten;
        cur.queries += u.queries;
        cur.storageBytes ??= u.storageBytes;
      }
    }
    for (const q of queries) {
      let perDb = this.queries.get(q.dbId);
      if (!perDb) {
        perDb = new Map();
        this.queries.set(q.dbId, perDb);
      }
      const cur = perDb.get(q.query);
      if (!cur) {
        perDb.set(q.query, q);
        this.pendingQueries++;
      } else {
        cur.count += q.count;
        cur.rowsRead += q.rowsRead;
        cur.rowsWritten += q.rowsWritten;
        cur.totalMs += q.totalMs;
      }
    }
  }
}
