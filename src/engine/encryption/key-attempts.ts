import { EncryptionKeyError } from "./errors.js";

/** Wrong keys one address may try on one database per window. */
export const WRONG_KEYS_PER_WINDOW = 10;
/** The window wrong keys are counted in. */
export const WRONG_KEY_WINDOW_MS = 60_000;
/** Counts kept at most; past it the oldest windows are dropped first. */
const MAX_TRACKED = 10_000;

/**
 * Wrong encryption keys tried per database and client address, in fixed windows. Each try
 * costs the server a key stretching (about 2 ms of CPU) and gives a guesser one more guess: past
 * WRONG_KEYS_PER_WINDOW in a window, further keys from that address for that database are refused
 * (`ENCRYPTION_KEY_ATTEMPTS`, 429) without being checked, right or wrong, until the window ends.
 * A right key doesn't reset the count. Counts live in this process: with several shards or nodes
 * each counts its own (a database is served by one shard of a node).
 */
export class KeyAttempts {
  private readonly windows = new Map<string, { start: number; wrong: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Throws ENCRYPTION_KEY_ATTEMPTS when `from` already tried too many wrong keys on `dbId`. */
  check(dbId: string, from: string): void {
    const w = this.current(`${dbId}\0${from}`);
    if (!w || w.wrong < WRONG_KEYS_PER_WINDOW) return;
    const seconds = Math.max(1, Math.ceil((w.start + WRONG_KEY_WINDOW_MS - this.now()) / 1000));
    throw new EncryptionKeyError(
      "attempts",
      `too many wrong encryption keys for this database from this address; try again in ${seconds} s`,
    );
  }

  /** Counts a wrong key from `from` on `dbId`. */
  wrong(dbId: string, from: string): void {
    const k = `${dbId}\0${from}`;
    const w = this.current(k);
    if (w) {
      w.wrong++;
      return;
    }
    if (this.windows.size >= MAX_TRACKED) this.sweep();
    this.windows.set(k, { start: this.now(), wrong: 1 });
  }

  private current(k: string): { start: number; wrong: number } | undefined {
    const w = this.windows.get(k);
    if (w && this.now() - w.start >= WRONG_KEY_WINDOW_MS) {
      this.windows.delete(k);
      return undefined;
    }
    return w;
  }

  /** Drops ended windows, and the oldest half if that isn't enough. */
  private sweep(): void {
    const now = this.now();
    for (const [k, w] of this.windows) if (now - w.start >= WRONG_KEY_WINDOW_MS) this.windows.delete(k);
    if (this.windows.size < MAX_TRACKED) return;
    let drop = this.windows.size / 2;
    for (const k of this.windows.keys()) {
      if (drop-- <= 0) break;
      this.windows.delete(k);
    }
  }
}
