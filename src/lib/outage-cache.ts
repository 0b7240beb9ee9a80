/**
 * How long a caller waits for the store when what it needs is cached but out of date: past it,
 * the store is taken as out of reach (a partition, an outage) and the last answer read is used
 * (ADR 0022).
 */
export const STORE_WAIT_MS = 500;
/** The oldest an answer may be and still be used while the store is out of reach. */
export const MAX_STALE_MS = 10 * 60_000;

interface Entry<V> {
  value: V;
  at: number;
}

/**
 * Answers read from the store, kept for `ttlMs`, and used for up to MAX_STALE_MS past that while
 * the store doesn't answer: the first caller after they went stale waits up to STORE_WAIT_MS for a
 * fresh read, callers while that read is still pending get the stale answer at once, and so do
 * callers whose read failed. Concurrent misses share one read. Without a stale answer, callers
 * wait for the read (or its failure) as usual.
 */
export class OutageTolerantCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly pending = new Map<string, { read: Promise<V>; since: number }>();

  constructor(private readonly ttlMs: number) {}

  /** The answer if fresh, without waiting. */
  fresh(key: string, now = Date.now()): Entry<V> | undefined {
    const hit = this.entries.get(key);
    return hit && now - hit.at < this.ttlMs ? hit : undefined;
  }

  /** The answer for `key`: cached, read with `read`, or stale while the store is out of reach. */
  get(key: string, read: () => Promise<V>, now = Date.now()): V | Promise<V> {
    const hit = this.fresh(key, now);
    if (hit) return hit.value;
    const old = this.entries.get(key);
    const stale = old && now - old.at <= MAX_STALE_MS ? old : undefined;
    let pending = this.pending.get(key);
    if (pending && stale && now - pending.since > STORE_WAIT_MS) return stale.value;
    if (!pending) {
      const started = read().then((value) => {
        this.entries.set(key, { value, at: Date.now() });
        return value;
      });
      pending = { read: started.finally(() => this.pending.delete(key)), since: now };
      pending.read.catch(() => {});
      this.pending.set(key, pending);
    }
    return stale ? orStale(pending.read, stale.value) : pending.read;
  }

  /** Forgets `key` if its answer is at least `minAgeMs` old: the next call reads the store. */
  forget(key: string, minAgeMs = 0, now = Date.now()): void {
    const hit = this.entries.get(key);
    if (hit && now - hit.at >= minAgeMs) this.entries.delete(key);
  }
}

/** `read`'s value if it comes within STORE_WAIT_MS, else (or if it fails) `stale`. */
async function orStale<V>(read: Promise<V>, stale: V): Promise<V> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<V>((resolve) => {
    timer = setTimeout(() => resolve(stale), STORE_WAIT_MS);
  });
  try {
    return await Promise.race([read, late]);
  } catch {
    return stale;
  } finally {
    clearTimeout(timer);
  }
}
