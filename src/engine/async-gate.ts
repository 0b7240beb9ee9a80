/** Hands back a slot taken from an `AsyncGate`; calling it more than once does nothing. */
export type Release = () => void;

/**
 * Admission to the driver's thread pool for statements that may run long. The pool has one thread
 * per core and a statement holds its thread until it ends, so without a gate one database's
 * backlog would queue ahead of everyone else's. Here each database runs at most one such
 * statement at a time, at most `capacity` run together, and when a slot frees the databases that
 * wait take turns (round robin), whatever the length of their queues: a database flooding the
 * pool waits behind itself, not in front of the others.
 */
export class AsyncGate {
  private running = 0;
  /** Databases with a statement running now. */
  private readonly busy = new Set<string>();
  /** Waiters per database; the map's order is the turn order. */
  private readonly queues = new Map<string, Array<(release: Release) => void>>();

  constructor(readonly capacity: number) {}

  /** A slot for a statement on database `key`, at once when one is free. */
  acquire(key: string): Release | Promise<Release> {
    if (this.running < this.capacity && !this.busy.has(key) && !this.queues.has(key)) return this.grant(key);
    return new Promise((resolve) => {
      const queue = this.queues.get(key);
      if (queue) queue.push(resolve);
      else this.queues.set(key, [resolve]);
    });
  }

  /** Statements waiting for a slot, for diagnostics and tests. */
  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  get active(): number {
    return this.running;
  }

  private grant(key: string): Release {
    this.running++;
    this.busy.add(key);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.busy.delete(key);
      this.dispatch();
    };
  }

  private dispatch(): void {
    for (const [key, queue] of this.queues) {
      if (this.running >= this.capacity) return;
      if (this.busy.has(key)) continue;
      const next = queue.shift()!;
      // To the back of the turn order, or gone when nothing more waits.
      this.queues.delete(key);
      if (queue.length > 0) this.queues.set(key, queue);
      next(this.grant(key));
    }
  }
}
