import type { BackupBucket } from "./bucket.js";

export interface ShippedEvent {
  dbId: string;
  generation: number;
  frame: number;
  /** When the bucket acknowledged it (ms). */
  at: number;
}

export interface ShippingContext {
  bucket: BackupBucket;
  /** A folder for snapshots being built. */
  workDir: string;
  snapshotIntervalMs: number;
  retentionMs: number;
  pruneEveryMs: number;
  now(): number;
  shipped(e: ShippedEvent): void;
}
