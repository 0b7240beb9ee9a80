import type { Logger } from "../lib/logger.js";
import type { Clock } from "../lib/time.js";
import type { Store } from "../store/store.js";
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
export class UsageMeter {
  private usage = new Map<string, UsageDelta>();
  private queries = new Map<string, QueryStatsDelta>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  record(
    db: { id: string; orgId: string },
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

    const query = sql.length > MAX_QUERY_TEXT ? `${sql.slice(0, MAX_QUERY_TEXT)}…` : sql;
    const qkey = `${db.id}\u0000${query}`;
    let q = this.queries.get(qkey);
    if (!q) {
      if (this.queries.size >= MAX_PENDING_QUERIES) return;
      q = { dbId: db.id, query, count: 0, rowsRead: 0, rowsWritten: 0, totalMs: 0 };
      this.queries.set(qkey, q);
    }
    q.count += 1;
    q.rowsRead += rowsRead;
    q.rowsWritten += rowsWritten;
    q.totalMs += ms;
  }

  /** Writes pending counts in one transaction; on failure they are kept for the next attempt. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.usage.size === 0 && this.queries.size === 0) return;
      const usage = this.usage;
      const queries = this.queries;
      this.usage = new Map();
      this.queries = new Map();
      try {
        await this.store.write(async (r) => {
          await r.usage.add([...usage.values()]);
          await r.usage.addQueryStats([...queries.values()]);
        });
      } catch (e) {
        this.log.error({ err: e }, "could not record usage; will retry");
        this.mergeBack(usage, queries);
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

  private mergeBack(usage: Map<string, UsageDelta>, queries: Map<string, QueryStatsDelta>): void {
    for (const [k, u] of usage) {
      const cur = this.usage.get(k);
      if (!cur) this.usage.set(k, u);
      else {
        cur.rowsRead += u.rowsRead;
        cur.rowsWritten += u.rowsWritten;
        cur.queries += u.queries;
      }
    }
    for (const [k, q] of queries) {
      const cur = this.queries.get(k);
      if (!cur) this.queries.set(k, q);
      else {
        cur.count += q.count;
        cur.rowsRead += q.rowsRead;
        cur.rowsWritten += q.rowsWritten;
        cur.totalMs += q.totalMs;
      }
    }
  }
}
