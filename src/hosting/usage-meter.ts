import type { StoreAccess, UsageFlush } from "../domain/core/ports.js";
import type { Logger } from "../lib/logger.js";
import type { Clock } from "../lib/time.js";
import { type StatementRecord, type UsageBatch, type UsageRecorder, UsageTally } from "./usage-tally.js";

export { ENCRYPTED_QUERY_LABEL, type StatementRecord } from "./usage-tally.js";

/**
 * Counts rows read, rows written and queries per database as statements run, and writes the counts
 * to the store in batches. Counting is in memory (a statement must not wait for the control plane);
 * `flush` runs on a timer, before usage is read, and at shutdown. Statements run by the node's
 * shards are counted there and collected here at every flush (`collectFrom`).
 */
export class UsageMeter implements UsageFlush, UsageRecorder {
  private readonly tally: UsageTally;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly listeners: Array<(orgIds: ReadonlySet<string>) => Promise<void>> = [];
  private readonly sources: Array<() => Promise<UsageBatch[]>> = [];

  constructor(
    private readonly store: StoreAccess,
    clock: Clock,
    private readonly log: Logger,
    /** Bytes a database's instance occupies in a location (storage history, per day). */
    private readonly storageOf?: (location: string, dbId: string) => number,
  ) {
    this.tally = new UsageTally(clock);
  }

  record(
    db: { id: string; orgId: string; location?: string; encrypted?: boolean },
    statement: string,
    rowsRead: number,
    rowsWritten: number,
    ms: number,
  ): void {
    this.tally.record(db, statement, rowsRead, rowsWritten, ms);
  }

  /** Calls `fn` with every statement as it is counted (metrics); it must be quick and not throw. */
  onRecord(fn: (s: StatementRecord) => void): void {
    this.tally.onRecord(fn);
  }

  /** Counts kept elsewhere (the shards' tallies), taken at the start of every flush. */
  collectFrom(source: () => Promise<UsageBatch[]>): void {
    this.sources.push(source);
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
      await this.collect();
      const orgIds = new Set<string>();
      if (!this.tally.empty) {
        const batch = this.tally.take();
        this.measureStorage(batch);
        try {
          await this.store.write(async (r) => {
            await r.usage.add(batch.usage);
            await r.usage.addQueryStats(batch.queries);
          });
          for (const u of batch.usage) orgIds.add(u.orgId);
        } catch (e) {
          this.log.error({ err: e }, "could not record usage; will retry");
          this.tally.merge(batch);
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

  private async collect(): Promise<void> {
    for (const source of this.sources) {
      try {
        for (const batch of await source()) this.tally.merge(batch);
      } catch (e) {
        // A shard that ended lost what it had counted since the last flush; the rest is kept.
        this.log.warn({ err: e }, "could not collect usage counted by a shard");
      }
    }
  }

  /** Sizes of the primaries written since the last flush, taken after those writes. */
  private measureStorage(batch: UsageBatch): void {
    if (!this.storageOf) return;
    const byKey = new Map(batch.usage.map((u) => [`${u.dbId}|${u.day}`, u]));
    for (const [key, location] of batch.written) {
      const u = byKey.get(key);
      if (u) u.storageBytes = this.storageOf(location, u.dbId);
    }
  }
}
