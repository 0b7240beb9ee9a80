import { LagStats } from "./lag.js";

interface Waiter {
  index: number;
  resolve: (ok: boolean) => void;
  timer: NodeJS.Timeout;
}

interface Commit {
  index: number;
  at: number;
  /** Replica locations that have it. */
  seen: Set<string>;
}

const key = (dbId: string, location: string) => `${dbId}/${location}`;

/**
 * How far each replica got, as its primary sees it: the replication index a replica's sync
 * request asked past, who waits for a replica to reach an index, and when each recent commit
 * reached each location (the lag).
 */
export class ReplicaProgress {
  readonly lag = new LagStats();
  private readonly observed = new Map<string, number>();
  private readonly waiters = new Map<string, Waiter[]>();
  /** Recent commits per database, to measure how long replicas took to have them. */
  private readonly commits = new Map<string, Commit[]>();

  /** Whether the replica is known to have everything up to `index`. */
  has(dbId: string, location: string, index: number): boolean {
    return (this.observed.get(key(dbId, location)) ?? -1) >= index;
  }

  /** The replica has everything up to `index`: waiters for it are answered, lag is sampled. */
  observe(dbId: string, location: string, index: number): void {
    const k = key(dbId, location);
    if ((this.observed.get(k) ?? -1) >= index) return;
    this.observed.set(k, index);
    const now = Date.now();
    for (const c of this.commits.get(dbId) ?? []) {
      if (c.index <= index && !c.seen.has(location)) {
        c.seen.add(location);
        this.lag.add(now - c.at, location);
      }
    }
    const list = this.waiters.get(k);
    if (!list) return;
    const still = list.filter((w) => {
      if (w.index > index) return true;
      clearTimeout(w.timer);
      w.resolve(true);
      return false;
    });
    if (still.length > 0) this.waiters.set(k, still);
    else this.waiters.delete(k);
  }

  /** Resolves true once the replica reaches `index`, false after `timeoutMs`. */
  wait(dbId: string, location: string, index: number, timeoutMs: number): Promise<boolean> {
    if (this.has(dbId, location, index)) return Promise.resolve(true);
    const k = key(dbId, location);
    return new Promise<boolean>((resolve) => {
      const w: Waiter = {
        index,
        resolve,
        timer: setTimeout(() => {
          this.waiters.set(
            k,
            (this.waiters.get(k) ?? []).filter((x) => x !== w),
          );
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.set(k, [...(this.waiters.get(k) ?? []), w]);
    });
  }

  /** A commit the primary made, which `replicas` locations are to get. */
  committed(dbId: string, index: number, at: number, replicas: number): void {
    const list = this.commits.get(dbId) ?? [];
    list.push({ index, at, seen: new Set() });
    while (list.length > 1000 || (list[0] && list[0].seen.size >= replicas)) list.shift();
    this.commits.set(dbId, list);
  }

  /** When the oldest commit the replica lacks was made (undefined: it has every one tracked). */
  oldestMissing(dbId: string, location: string): number | undefined {
    return (this.commits.get(dbId) ?? []).find((c) => !c.seen.has(location))?.at;
  }

  /** Forgets one replica's progress (it was dropped, or its file became a primary's). */
  forget(dbId: string, location: string): void {
    this.observed.delete(key(dbId, location));
  }

  /** Forgets a database's progress everywhere (its primary moved: indexes start again). */
  forgetDatabase(dbId: string): void {
    for (const k of [...this.observed.keys()]) if (k.startsWith(`${dbId}/`)) this.observed.delete(k);
    this.commits.delete(dbId);
  }

  close(): void {
    for (const list of this.waiters.values()) for (const w of list) clearTimeout(w.timer);
    this.waiters.clear();
  }
}
