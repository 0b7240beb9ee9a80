/** A database refused for a while: its statements were running when its shard died, more than once. */
export interface Quarantined {
  dbId: string;
  /** When it is served again (ms). */
  until: number;
  /** Deaths of its shard it was running statements at, within the window. */
  crashes: number;
}

/** Deaths of a shard while a database's statements ran, within this long, that quarantine the database. */
export const QUARANTINE_AFTER_CRASHES = 2;
export const QUARANTINE_WINDOW_MS = 10 * 60_000;
/** How long a quarantined database is refused. */
export const QUARANTINE_MS = 10 * 60_000;

/**
 * The databases whose statements keep ending their shard (a value the driver aborts the process
 * on, a statement stuck where nothing can interrupt it). One death restarts the shard; the second
 * within the window, with the same database's statements running, puts that database in
 * quarantine: refused for a while, so its shard's other databases aren't taken down with it
 * again and again.
 */
export class Quarantine {
  private readonly deaths = new Map<string, number[]>();
  private readonly held = new Map<string, Quarantined>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A shard died while the database's statements ran; answers its quarantine if it starts now. */
  died(dbId: string): Quarantined | undefined {
    const now = this.now();
    const recent = (this.deaths.get(dbId) ?? []).filter((t) => now - t < QUARANTINE_WINDOW_MS);
    recent.push(now);
    this.deaths.set(dbId, recent);
    if (recent.length < QUARANTINE_AFTER_CRASHES) return undefined;
    const q = { dbId, until: now + QUARANTINE_MS, crashes: recent.length };
    this.held.set(dbId, q);
    return q;
  }

  /** The databases refused now. */
  list(): Quarantined[] {
    const now = this.now();
    for (const [id, q] of this.held) if (q.until <= now) this.held.delete(id);
    return [...this.held.values()];
  }
}

/** A shard's copy of the node's quarantine, checked on each request. */
export class QuarantineMirror {
  private held = new Map<string, Quarantined>();

  update(list: readonly Quarantined[]): void {
    this.held = new Map(list.map((q) => [q.dbId, q]));
  }

  /** The database's quarantine if it is in force now. */
  of(dbId: string): Quarantined | undefined {
    const q = this.held.get(dbId);
    return q && q.until > Date.now() ? q : undefined;
  }
}
