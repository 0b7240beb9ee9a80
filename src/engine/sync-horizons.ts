/** A replica's sync in progress: where it stops, and when its last request came. */
interface Horizon {
  generation: number;
  frame: number;
  at: number;
}

/** Horizons kept at most before the stale ones (syncs that broke off) are swept. */
const SWEEP_ABOVE = 1024;

/**
 * Where each replica's current sync stops. libSQL's sync client asks for frames until the
 * primary says there are no more. A primary that commits between every two of a replica's
 * requests would keep that one sync going for as long as its writes go on, and with it the
 * replica's location thread, where that location's reads wait. So a sync ends at the primary's
 * last commit when the sync began. What is committed after that comes with the next sync, which
 * the commit's pull-now notice starts.
 *
 * The server sees requests, not syncs: the requests of one sync follow each other at once, so a
 * request more than `pauseMs` after the replica's previous one starts a new sync. A sync that
 * breaks off leaves its horizon behind for at most that long.
 */
export class SyncHorizons {
  private readonly open = new Map<string, Horizon>();

  constructor(
    private readonly pauseMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The last frame of generation `generation` that the replica's sync may be served, given where
   * the primary is now (`current`); undefined for no limit (a past generation's frames are fixed).
   */
  limit(
    replica: string,
    generation: number,
    current: { generation: number; frame: number },
  ): number | undefined {
    const now = this.now();
    if (generation !== current.generation) {
      this.open.delete(replica);
      return undefined;
    }
    let h = this.open.get(replica);
    if (!h || h.generation !== generation || now - h.at > this.pauseMs) {
      if (!h && this.open.size >= SWEEP_ABOVE) this.sweep(now);
      h = { generation, frame: current.frame, at: now };
      this.open.set(replica, h);
    }
    h.at = now;
    return h.frame;
  }

  /** The replica was told it has everything: its next request starts a new sync. */
  end(replica: string): void {
    this.open.delete(replica);
  }

  /** Horizons held, for tests. */
  get size(): number {
    return this.open.size;
  }

  private sweep(now: number): void {
    for (const [replica, h] of this.open) if (now - h.at > this.pauseMs) this.open.delete(replica);
  }
}
