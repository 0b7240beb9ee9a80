/** Requests one database may start in one turn of the event loop while others may be waiting. */
export const REQUESTS_PER_TURN = 8;

/**
 * Takes requests in turns per database, so one database's backlog can't hold the others back.
 *
 * Point reads and single-row writes run on the event loop as they arrive. Left to arrival order, a
 * tenant with 200 connections in flight gets 200 requests served for each one of a tenant with
 * one: the lone request waits for a whole loop turn of the other's. Here each database starts at
 * most `perTurn` requests per turn; the rest wait, in their order, and are started at the end of
 * the turn, `perTurn` per waiting database, round robin. A request of a quiet database therefore
 * waits for at most `perTurn` requests of each busy one, however many connections they hold.
 */
export class FairTurns {
  /** Requests started in the current turn, per database. */
  private readonly started = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();
  private turnEndPending = false;

  constructor(
    private readonly perTurn = REQUESTS_PER_TURN,
    /** Told of a request that threw when started late (its caller is gone by then). */
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Starts `work` now, or after other databases' turns when `key`'s share of this turn is used. */
  run(key: string, work: () => void): void {
    const n = this.started.get(key) ?? 0;
    if (n < this.perTurn && !this.waiting.has(key)) {
      this.started.set(key, n + 1);
      this.endTurnSoon();
      work();
      return;
    }
    const queue = this.waiting.get(key);
    if (queue) queue.push(work);
    else this.waiting.set(key, [work]);
    this.endTurnSoon();
  }

  /** Requests waiting for a later turn, all databases together. */
  get backlog(): number {
    let n = 0;
    for (const q of this.waiting.values()) n += q.length;
    return n;
  }

  private endTurnSoon(): void {
    if (this.turnEndPending) return;
    this.turnEndPending = true;
    // setImmediate runs after the loop has polled its sockets: requests that arrived meanwhile
    // (a quiet database's among them) were started before the ones let through here.
    setImmediate(() => this.endTurn());
  }

  private endTurn(): void {
    this.turnEndPending = false;
    this.started.clear();
    for (const [key, queue] of this.waiting) {
      const batch = queue.splice(0, this.perTurn);
      if (queue.length === 0) this.waiting.delete(key);
      // They count against the next turn, which the next poll's arrivals share.
      this.started.set(key, batch.length);
      for (const work of batch) {
        try {
          work();
        } catch (error) {
          this.onError(error);
        }
      }
    }
    if (this.started.size > 0) this.endTurnSoon();
  }
}
