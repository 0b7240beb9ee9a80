/**
 * Fixed-window request counting per key (an API token), for the RateLimit headers of the IETF
 * draft (draft-ietf-httpapi-ratelimit-headers): each window allows `limit` requests, and the
 * headers tell the client how many are left and when the window resets. Counts live in this
 * process only: with several processes, each allows `limit` per window.
 */
export interface RateLimitPolicy {
  /** Requests allowed per window; 0 turns limiting off. */
  limit: number;
  windowSeconds: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private lastSweep = 0;

  constructor(
    readonly policy: RateLimitPolicy,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.policy.limit > 0;
  }

  /** Counts one request for `key` and says whether it is within the limit. */
  take(key: string): RateDecision {
    const windowMs = this.policy.windowSeconds * 1000;
    const now = this.now();
    const start = now - (now % windowMs);
    this.sweep(start);
    let w = this.windows.get(key);
    if (!w || w.start !== start) {
      w = { start, count: 0 };
      this.windows.set(key, w);
    }
    const allowed = w.count < this.policy.limit;
    if (allowed) w.count++;
    return {
      allowed,
      limit: this.policy.limit,
      remaining: this.policy.limit - w.count,
      resetSeconds: Math.max(1, Math.ceil((start + windowMs - now) / 1000)),
    };
  }

  /** Drops counters of past windows, at most once per window, so memory follows active tokens. */
  private sweep(currentStart: number): void {
    if (currentStart === this.lastSweep) return;
    this.lastSweep = currentStart;
    for (const [key, w] of this.windows) if (w.start < currentStart) this.windows.delete(key);
  }
}
