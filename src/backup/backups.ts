import type { Logger } from "../lib/logger.js";
import { BackupBucket } from "./bucket.js";
import type { Manifest } from "./objects.js";
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

/** Continuous backups of one node, as the composition root starts them. */
export interface Backups {
  readonly shipper: Shipper;
  restore(dbId: string, dest: string, opts?: RestoreOptions): Promise<BucketRestoreOutcome>;
  restoreAll(
    pick: (id: string, manifest: Manifest | undefined) => string | undefined,
    opts?: RestoreOptions,
  ): Promise<RestoreAllResult[]>;
  bootstrap(dbId: string, dest: string, role: "primary" | "replica"): Promise<BucketRestoreOutcome>;
  list(): Promise<Array<{ id: string; manifest: Manifest | undefined }>>;
  /** Ships what is left (one last pass, bounded by `flushMs`), stops, and closes the client. */
  close(flushMs?: number): Promise<void>;
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
    shipper,
    restore: (dbId, dest, opts) => restoreDatabase(bucket, dbId, dest, opts),
    restoreAll: (pick, opts) => restoreAll(bucket, pick, opts),
    bootstrap: (dbId, dest, role) => bootstrapLocation(bucket, dbId, dest, role),
    list: () => listBackedUpDatabases(bucket),
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
