/**
 * One writer at a time per database, waited for asynchronously.
 *
 * The engine is synchronous and shares the event loop with every request, so SQLite's own
 * busy-wait (busy_timeout) would freeze the whole service while another stream holds the write
 * lock, and that stream's COMMIT could never arrive. Instead a stream takes this lock before its
 * first write and keeps it until its connection is back in autocommit; other writers wait here.
 */
export class WriteLock {
  private owner: object | null = null;
  private onContention: (() => void) | undefined;
  private readonly waiters: Array<{
    owner: object;
    onContention: (() => void) | undefined;
    resolve: () => void;
    reject: (e: Error) => void;
    timer: NodeJS.Timeout;
  }> = [];

  get idle(): boolean {
    return this.owner === null && this.waiters.length === 0;
  }

  get contended(): boolean {
    return this.waiters.length > 0;
  }

  /**
   * Resolves once `owner` holds the lock; rejects with LockTimeoutError after `timeoutMs`.
   * `onContention` is called while `owner` holds the lock and another writer starts waiting,
   * so a holder can give way after its own time limit (see HranaStream).
   */
  acquire(owner: object, timeoutMs: number, onContention?: () => void): Promise<void> {
    if (this.owner === owner) return Promise.resolve();
    if (this.owner === null) {
      this.owner = owner;
      this.onContention = onContention;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        owner,
        onContention,
        resolve,
        reject,
        timer: setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(new LockTimeoutError(timeoutMs));
        }, timeoutMs),
      };
      this.waiters.push(waiter);
      this.onContention?.();
    });
  }

  /** Takes the lock for `owner` at once if nobody holds it; false otherwise (then `acquire`). */
  tryAcquire(owner: object, onContention?: () => void): boolean {
    if (this.owner === owner) return true;
    if (this.owner !== null) return false;
    this.owner = owner;
    this.onContention = onContention;
    return true;
  }

  release(owner: object): void {
    if (this.owner !== owner) return;
    const next = this.waiters.shift();
    this.owner = next?.owner ?? null;
    this.onContention = next?.onContention;
    if (next) {
      clearTimeout(next.timer);
      next.resolve();
      if (this.waiters.length > 0) this.onContention?.();
    }
  }
}

export class LockTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`database is locked: another transaction kept the write lock for more than ${timeoutMs} ms`);
  }
}
