import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import type { Logger } from "../lib/logger.js";
import type { BackupBucket } from "./bucket.js";
import { DatabaseShipper } from "./database-shipper.js";
import { pendingSince } from "./delay.js";
import type { ShippedEvent } from "./shipping-context.js";
import type { BackupLog, BackupSource } from "./source.js";

export interface ShipperOptions {
  bucket: BackupBucket;
  source: BackupSource;
  /** A folder for snapshots being built (emptied on start). */
  workDir: string;
  /** Time between passes: the longest a commit waits before its upload starts. */
  intervalMs: number;
  snapshotIntervalMs: number;
  retentionMs: number;
  /** How often each database's expired objects are looked for (default 10 minutes). */
  pruneEveryMs?: number;
  /** Databases shipped at the same time (default 4). */
  concurrency?: number;
  /** The longest wait between retries of a failing database (default 60 s). */
  maxBackoffMs?: number;
  log?: Logger;
  now?: () => number;
}

/** One database's backup as the shipper sees it, for metrics and the admin API. */
export interface DatabaseBackupStatus {
  id: string;
  /** Where the bucket's copy ends; undefined until the bucket was read. */
  generation: number | undefined;
  frame: number | undefined;
  /** How long the oldest commit the bucket lacks has waited (0: the bucket has everything). */
  delayMs: number;
  failures: number;
  lastError: string | undefined;
  /** Set when this node's log is behind the bucket's copy: nothing is shipped until resolved. */
  diverged: string | undefined;
}

export interface ShipperStatus {
  /** The largest delay of any database: how far the bucket trails this node. */
  delayMs: number;
  databases: DatabaseBackupStatus[];
}

interface Tracked {
  shipper: DatabaseShipper;
  path: string;
  failures: number;
  retryAt: number;
  lastError: string | undefined;
  /** When shipping first failed, while it keeps failing: the delay grows from there at least. */
  waitingSince: number | undefined;
  /** The divergence was logged. */
  reported: boolean;
}

/**
 * Continuous backup of every primary on this node: a pass every `intervalMs` ships what each
 * database committed since the last one. It runs beside the commit path, never on it: it takes no
 * lock, reads committed frames from the WAL and archives in small synchronous batches, and
 * compresses and uploads asynchronously. A database whose upload fails is retried with a growing
 * wait (up to `maxBackoffMs`) while the others go on, and its delay keeps growing in `status()`.
 */
export class Shipper {
  private readonly tracked = new Map<string, Tracked>();
  private readonly listeners: Array<(e: ShippedEvent) => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly opts: ShipperOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Starts the passes; the first runs at once. */
  start(): void {
    mkdirSync(this.opts.workDir, { recursive: true, mode: 0o700 });
    // Leftovers of snapshots a stopped process was building.
    for (const f of readdirSync(this.opts.workDir)) rmSync(path.join(this.opts.workDir, f), { force: true });
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops the passes after the one in progress (shutdown may call `pass()` first to flush). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Calls `listener` each time the bucket acknowledged a database's frames up to a point. */
  onShipped(listener: (e: ShippedEvent) => void): void {
    this.listeners.push(listener);
  }

  /** One pass over every primary now (waits for a pass already running first). */
  async pass(): Promise<void> {
    while (this.running) await this.running;
    this.running = this.runPass().finally(() => {
      this.running = undefined;
    });
    await this.running;
  }

  status(): ShipperStatus {
    const now = this.now();
    const databases = [...this.tracked.entries()].map(([id, t]) => {
      // A database deleted since the last pass is dropped at the next: don't open a log for it.
      const readable = t.shipper.loaded && existsSync(t.path);
      const pending = readable ? pendingSince(this.logOf(t), t.shipper.position) : undefined;
      const since = Math.min(pending ?? Number.POSITIVE_INFINITY, t.waitingSince ?? Number.POSITIVE_INFINITY);
      return {
        id,
        generation: t.shipper.position?.generation,
        frame: t.shipper.position?.frame,
        delayMs: Number.isFinite(since) ? Math.max(0, now - since) : 0,
        failures: t.failures,
        lastError: t.lastError,
        diverged: t.shipper.diverged,
      };
    });
    return { delayMs: Math.max(0, ...databases.map((d) => d.delayMs)), databases };
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const started = this.now();
      void this.pass().finally(() =>
        this.schedule(Math.max(0, this.opts.intervalMs - (this.now() - started))),
      );
    }, delay);
    this.timer.unref();
  }

  private async runPass(): Promise<void> {
    mkdirSync(this.opts.workDir, { recursive: true, mode: 0o700 });
    const seen = new Set<string>();
    const due: Tracked[] = [];
    for (const primary of this.opts.source.primaries()) {
      seen.add(primary.id);
      let t = this.tracked.get(primary.id);
      if (!t || t.path !== primary.path) {
        t = {
          shipper: new DatabaseShipper(primary, this.context()),
          path: primary.path,
          failures: 0,
          retryAt: 0,
          lastError: undefined,
          waitingSince: undefined,
          reported: false,
        };
        this.tracked.set(primary.id, t);
      }
      if (t.retryAt <= this.now()) due.push(t);
    }
    for (const id of this.tracked.keys()) if (!seen.has(id)) this.tracked.delete(id);
    const workers = Array.from({ length: Math.min(this.opts.concurrency ?? 4, due.length) }, async () => {
      for (let t = due.shift(); t; t = due.shift()) await this.runOne(t);
    });
    await Promise.all(workers);
  }

  private async runOne(t: Tracked): Promise<void> {
    const id = t.shipper.primary.id;
    try {
      await t.shipper.run(this.logOf(t));
      if (t.shipper.diverged && !t.reported) {
        t.reported = true;
        this.opts.log?.error(
          { db: id, reason: t.shipper.diverged },
          "backup shipping stopped for a database",
        );
      }
      if (t.failures > 0) this.opts.log?.info({ db: id }, "backup shipping resumed");
      t.failures = 0;
      t.retryAt = 0;
      t.lastError = undefined;
      t.waitingSince = undefined;
    } catch (e) {
      t.failures++;
      t.lastError = (e as Error).message;
      t.waitingSince ??= this.now();
      const base = Math.min(this.opts.maxBackoffMs ?? 60_000, this.opts.intervalMs * 2 ** t.failures);
      const wait = base / 2 + Math.random() * (base / 2);
      t.retryAt = this.now() + wait;
      // The first failure and then every tenth: an outage must show in the log without flooding it.
      if (t.failures === 1 || t.failures % 10 === 0) {
        this.opts.log?.warn(
          { db: id, failures: t.failures, retryInMs: Math.round(wait), err: t.lastError },
          "backup shipping failed; retrying",
        );
      }
    }
  }

  private logOf(t: Tracked): BackupLog {
    return this.opts.source.log(t.path);
  }

  private context() {
    return {
      bucket: this.opts.bucket,
      workDir: this.opts.workDir,
      snapshotIntervalMs: this.opts.snapshotIntervalMs,
      retentionMs: this.opts.retentionMs,
      pruneEveryMs: this.opts.pruneEveryMs ?? 600_000,
      now: this.now,
      shipped: (e: ShippedEvent) => {
        for (const l of this.listeners) l(e);
      },
    };
  }
}
