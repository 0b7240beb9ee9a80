import type { Logger } from "../lib/logger.js";

/** How long a replica is retried after a write it must show, before its reads go back to it anyway. */
const GIVE_UP_MS = 5 * 60_000;
/** Between two failed pulls of a lagging replica. */
const RETRY_MS = 1000;

interface Lag {
  /** Writes marked so far, and how many of them a finished pull covers. */
  wanted: number;
  covered: number;
  since: number;
}

/**
 * Replicas on this node that may not have a write this node sent on to another node's primary:
 * that node answered the write before this location's replica confirmed it (its wait ran out).
 * Until a pull that began after the mark has finished, reads at that location go to the primary,
 * so a client never reads older data than it wrote through the location's URL.
 */
export class LaggingReplicas {
  private readonly lags = new Map<string, Lag>();

  constructor(
    /** Has the replica pull now; resolves once a pull begun after the call has finished. */
    private readonly pull: (dbId: string, location: string) => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** A write answered by the primary's node may be missing from this replica. */
  mark(dbId: string, location: string): void {
    const k = `${dbId}/${location}`;
    const lag = this.lags.get(k);
    if (lag) {
      lag.wanted++;
      return;
    }
    this.lags.set(k, { wanted: 1, covered: 0, since: Date.now() });
    void this.catchUp(k, dbId, location);
  }

  /** Whether reads at `location` must go to the primary for now. */
  isLagging(dbId: string, location: string): boolean {
    return this.lags.size > 0 && this.lags.has(`${dbId}/${location}`);
  }

  private async catchUp(k: string, dbId: string, location: string): Promise<void> {
    const lag = this.lags.get(k)!;
    while (lag.covered < lag.wanted) {
      const target = lag.wanted;
      try {
        await this.pull(dbId, location);
        lag.covered = target;
      } catch (e) {
        if (Date.now() - lag.since > GIVE_UP_MS) {
          this.log.warn(
            { err: e, dbId, location },
            "a replica still can't pull a write sent on from this location; its reads go back to it, and may miss that write",
          );
          break;
        }
        await new Promise((r) => setTimeout(r, RETRY_MS).unref());
      }
    }
    this.lags.delete(k);
  }
}
