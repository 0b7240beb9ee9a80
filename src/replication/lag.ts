/**
 * Replication lag samples: the time from a commit on a primary to the moment a replica asked for
 * the frames after it (so it had applied it). Kept in a ring so memory stays bounded.
 */
export class LagStats {
  private readonly samples: number[] = [];
  private at = 0;

  constructor(private readonly capacity = 10_000) {}

  add(ms: number): void {
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
