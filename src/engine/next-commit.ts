import type { EventEmitter } from "node:events";

/**
 * Those waiting for one database's next commit (long-polling pulls), so nothing polls: woken by
 * the commit, a timeout or the caller's cancel, whichever comes first. The caller checks the
 * state again afterwards.
 */
export class NextCommit {
  private readonly waiting = new Set<() => void>();
  private closed = false;

  /** Resolves at the next commit, after `ms`, or when `cancel` fires (the client went away). */
  wait(ms: number, cancel: Pick<EventEmitter, "once" | "off">): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) {
        resolve();
        return;
      }
      const done = () => {
        clearTimeout(timer);
        cancel.off("close", done);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.waiting.add(done);
      cancel.once("close", done);
    });
  }

  /** The database committed (or went away): everyone waiting looks again. */
  wake(): void {
    for (const done of [...this.waiting]) done();
  }

  /** Shutting down: those waiting answer now, and later waits don't wait. */
  close(): void {
    this.closed = true;
    this.wake();
  }

  get size(): number {
    return this.waiting.size;
  }
}
