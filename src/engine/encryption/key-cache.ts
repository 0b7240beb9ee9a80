import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { EncryptionKeyError } from "./errors.js";
import { KeyAttempts } from "./key-attempts.js";
import { parseKey } from "./key-input.js";
import { type DatabaseKey, type EncryptionParams, unlockDatabase } from "./keys.js";

export interface KeyCacheOptions {
  /** How long a key stays after its database's last use; 0 keeps none (every request verifies). */
  idleMs: number;
  /** Told when a database's key is dropped, so its keyed connections close too. */
  onForget?: (dbId: string) => void;
  /** Told of each key refused as wrong, or refused unchecked past the attempts allowed. */
  onRefused?: (reason: "invalid" | "attempts") => void;
  now?: () => number;
}

interface Entry {
  key: DatabaseKey;
  /** HMAC of the key as presented, under this process's secret: a cheap equality test. */
  seen: Buffer;
  usedAt: number;
}

/** The field name used in errors about a key that came in the request header. */
export const KEY_HEADER = "x-turso-encryption-key";

/**
 * The keys of encrypted databases in use, in this process's memory only. Verifying a key costs a
 * PBKDF2 (keys.ts), so a verified key is kept while its database is used and dropped once idle
 * for `idleMs`; later requests with the same key are matched by an HMAC under a random
 * per-process secret, which needs neither the key stored as given nor the slow check again.
 *
 * Nothing here reaches disk or a log; the limit of what JavaScript allows is that strings can't
 * be wiped, so a memory dump of a running process can reveal keys of databases in use.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly secret = randomBytes(32);
  private readonly now: () => number;
  private readonly attempts: KeyAttempts;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: KeyCacheOptions) {
    this.now = opts.now ?? Date.now;
    this.attempts = new KeyAttempts(this.now);
  }

  /**
   * The engine key of database `dbId` for the key text a request carried (base64, as in the
   * header). Throws `EncryptionKeyError`: "required" without one, "malformed" when it isn't a key
   * for the database's cipher, "invalid" when it is another key.
   */
  unlock(
    dbId: string,
    params: EncryptionParams,
    keyText: string | undefined,
    field = KEY_HEADER,
    /** The client's address, for the limit on wrong keys (see key-attempts.ts). */
    from = "",
  ): DatabaseKey {
    if (keyText === undefined || keyText === "") throw new EncryptionKeyError("required");
    const key = parseKey(keyText, field, params.cipher);
    const seen = createHmac("sha256", this.secret)
      .update(dbId)
      .update("\0")
      .update(params.check)
      .update(key)
      .digest();
    const hit = this.entries.get(dbId);
    if (hit && hit.key.check === params.check && timingSafeEqual(hit.seen, seen)) {
      hit.usedAt = this.now();
      return hit.key;
    }
    const unlocked = this.verify(dbId, params, key, from);
    if (this.opts.idleMs > 0) {
      this.entries.set(dbId, { key: unlocked, seen, usedAt: this.now() });
      this.schedule();
    } else {
      // Nothing kept: once the request that brought the key has its connection, the database's
      // keyed connections are retired (they close as soon as they are returned).
      setTimeout(() => this.opts.onForget?.(dbId), 0).unref();
    }
    return unlocked;
  }

  /** Checks a key not seen before against the database's check value, within the attempts allowed. */
  private verify(dbId: string, params: EncryptionParams, key: Buffer, from: string): DatabaseKey {
    try {
      this.attempts.check(dbId, from);
    } catch (e) {
      this.opts.onRefused?.("attempts");
      throw e;
    }
    try {
      return unlockDatabase(params, key);
    } catch (e) {
      if (e instanceof EncryptionKeyError && e.problem === "invalid") {
        this.attempts.wrong(dbId, from);
        this.opts.onRefused?.("invalid");
      }
      throw e;
    }
  }

  /** The key of a database held now (for work a request started, such as a checkpoint). */
  peek(dbId: string): DatabaseKey | undefined {
    return this.entries.get(dbId)?.key;
  }

  /** Drops a database's key now (the database was deleted, or its connections closed). */
  forget(dbId: string): void {
    if (this.entries.delete(dbId)) this.opts.onForget?.(dbId);
    if (this.entries.size === 0) this.stopTimer();
  }

  /** Drops every key idle for `idleMs` or longer; returns the databases dropped. */
  sweep(): string[] {
    const cutoff = this.now() - this.opts.idleMs;
    const gone = [...this.entries].filter(([, e]) => e.usedAt <= cutoff).map(([id]) => id);
    for (const id of gone) this.forget(id);
    return gone;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Drops every key (shutdown). */
  close(): void {
    for (const id of [...this.entries.keys()]) this.forget(id);
    this.stopTimer();
  }

  /** Sweeps while keys are held; the timer never keeps the process alive. */
  private schedule(): void {
    if (this.timer) return;
    const every = Math.max(250, Math.min(this.opts.idleMs / 4, 10_000));
    this.timer = setInterval(() => this.sweep(), every);
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
