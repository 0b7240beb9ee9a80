/**
 * Says whether something keyed may happen again: at most once per key per `everyMs`. For a
 * warning about a state that lasts (a replica that can't answer) without one line per request.
 */
export class Throttle {
  private readonly last = new Map<string, number>();

  constructor(private readonly everyMs: number) {}

  /** True (and remembered) when `key` last came due `everyMs` or more ago, or never. */
  due(key: string, now = Date.now()): boolean {
    const at = this.last.get(key);
    if (at !== undefined && now - at < this.everyMs) return false;
    // Entries past their window are dropped as new ones come, so the map follows live keys.
    if (this.last.size >= 1024)
      for (const [k, t] of this.last) if (now - t >= this.everyMs) this.last.delete(k);
    this.last.set(key, now);
    return true;
  }
}
