/**
 * Replication lag samples: the time from a commit on a primary to the moment a replica asked for
 * the frames after it (so it had applied it). Kept in a ring so memory stays bounded.
 */
export class LagStats {
  private readonly samples: number[] = [];
  private at = 0;
  private readonly listeners: Array<(ms: number, location: string | undefined) => void> = [];

  constructor(private readonly capacity = 10_000) {}

  /** Calls `fn` with every sample as it is taken (metrics). */
  onSample(fn: (ms: number, location: string | undefined) => void): void {
    this.listeners.push(fn);
  }

  /** `location`: where the replica that took this long is. */
  add(ms: number, location?: string): void {
    for (const fn of this.listeners) fn(ms, location);
    if (this.samples.length < this.capacity) this.samples.push(ms);
    else this.samples[this.at++ % this.capacity] = ms;
  }

  summary(): { count: number; p50: number; p99: number; max: number } {
    const sorted = [...this.samples].sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
    return { count: sorted.length, p50: pct(0.5), p99: pct(0.99), max: sorted[sorted.length - 1] ?? 0 };
  }

  reset(): void {
    this.samples.length = 0;
    this.at = 0;
  }
}
