import type { Logger } from "../lib/logger.js";
import { BackupBucket } from "./bucket.js";
import type { Manifest } from "./objects.js";
import { type RestorePoints, restorePoints } from "./points.js";
import { type BucketRestoreOutcome, type RestoreOptions, restoreDatabase } from "./restore.js";
import {
  bootstrapLocation,
  listBackedUpDatabases,
  type RestoreAllResult,
  restoreAll,
} from "./restore-all.js";
import type { BackupSettings } from "./settings.js";
import { Shipper } from "./shipper.js";
import type { BackupSource } from "./source.js";

/** What the bucket is read for: restores, seeds and restore points. */
export interface BackupBucketReader {
  restore(dbId: string, dest: string, opts?: RestoreOptions): Promise<BucketRestoreOutcome>;
  restoreAll(
    pick: (id: string, manifest: Manifest | undefined) => string | undefined,
    opts?: RestoreOptions,
  ): Promise<RestoreAllResult[]>;
  bootstrap(dbId: string, dest: string, role: "primary" | "replica"): Promise<BucketRestoreOutcome>;
  list(): Promise<Array<{ id: string; manifest: Manifest | undefined }>>;
  /** What the bucket can restore a database to; undefined when it has no snapshot of it. */
  points(dbId: string): Promise<RestorePoints | undefined>;
  close(): void;
}

/** Continuous backups of one process's primaries, as the composition root starts them. */
export interface Backups extends Omit<BackupBucketReader, "close"> {
  readonly shipper: Shipper;
  /** Ships what is left (one last pass, bounded by `flushMs`), stops, and closes the client. */
  close(flushMs?: number): Promise<void>;
}

/** The bucket for reading back what was shipped, with no shipping of this process's own. */
export function openBackupBucket(settings: BackupSettings): BackupBucketReader {
  return readerOf(new BackupBucket(settings));
}

function readerOf(bucket: BackupBucket): BackupBucketReader {
  return {
    restore: (dbId, dest, opts) => restoreDatabase(bucket, dbId, dest, opts),
    restoreAll: (pick, opts) => restoreAll(bucket, pick, opts),
    bootstrap: (dbId, dest, role) => bootstrapLocation(bucket, dbId, dest, role),
    list: () => listBackedUpDatabases(bucket),
    points: (dbId) => restorePoints(bucket, dbId),
    close: () => bucket.close(),
  };
}

/**
 * Builds the backup of a node from its settings: `source` says which primaries it holds and
 * gives their frame logs; `workDir` is a folder in the data folder for snapshots being built.
 * Shipping starts at once.
 */
export function startBackups(
  settings: BackupSettings,
  deps: { source: BackupSource; workDir: string; log?: Logger },
): Backups {
  const bucket = new BackupBucket(settings);
  const shipper = new Shipper({
    bucket,
    source: deps.source,
    workDir: deps.workDir,
    intervalMs: settings.intervalMs,
    snapshotIntervalMs: settings.snapshotIntervalMs,
    retentionMs: settings.retentionMs,
    log: deps.log,
  });
  shipper.start();
  return {
    ...readerOf(bucket),
    shipper,
    close: async (flushMs = 10_000) => {
      await shipper.stop();
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, flushMs);
      });
      await Promise.race([shipper.pass().catch(() => undefined), limit]);
      clearTimeout(timer);
      bucket.close();
    },
  };
}
