import type { EventEmitter } from "node:events";
import type { HostedDatabases } from "../../engine/hosted-databases.js";

/**
 * Long-polling pulls waiting for a database to change: each waits on its database's file path and
 * is woken by the hosted databases' commit event, so nothing polls.
 */
export class CommitWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();
  private closed = false;

  constructor(hosted: Pick<HostedDatabases, "onCommit">) {
    hosted.onCommit((e) => {
      const set = this.waiting.get(e.path);
      if (!set) return;
      this.waiting.delete(e.path);
      for (const wake of set) wake();
    });
  }

  /**
   * Resolves at the next commit to `path`, after `ms`, or when `cancel` fires (the client went
   * away), whichever comes first. The caller checks the state again afterwards.
   */
  wait(path: string, ms: number, cancel: Pick<EventEmitter, "once" | "off">): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) {
        resolve();
        return;
      }
      let set = this.waiting.get(path);
      if (!set) {
        set = new Set();
        this.waiting.set(path, set);
      }
      const done = () => {
        clearTimeout(timer);
        cancel.off("close", done);
        const s = this.waiting.get(path);
        s?.delete(done);
        if (s?.size === 0) this.waiting.delete(path);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      set.add(done);
      cancel.once("close", done);
    });
  }

  /** Shutting down: every waiting pull answers now (nothing new), and later ones don't wait. */
  close(): void {
    this.closed = true;
    const all = [...this.waiting.values()];
    this.waiting.clear();
    for (const set of all) for (const wake of set) wake();
  }

  /** Pulls waiting now, for tests and diagnostics. */
  get size(): number {
    let n = 0;
    for (const s of this.waiting.values()) n += s.size;
    return n;
  }
}
