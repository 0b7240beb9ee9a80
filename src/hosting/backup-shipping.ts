import { type Backups, startBackups } from "../backup/backups.js";
import type { BackupSettings } from "../backup/settings.js";
import type { ShipperStatus } from "../backup/shipper.js";
import type { HostedDatabases } from "../engine/hosted-databases.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { Logger } from "../lib/logger.js";
import type { ShippingControl } from "./backup-service.js";
import { type HeldPrimary, ShippedPrimaries } from "./backup-source.js";

/** How often the list of primaries to ship is fetched again. */
const LIST_REFRESH_MS = 1000;

/**
 * Shipping of the primaries this process serves (`primaries` says which), to the bucket, from
 * their frame logs: one `Shipper` per process, so each primary is shipped by exactly one.
 */
export class LocalShipping implements ShippingControl {
  private backups: Backups | undefined;
  private readonly source: ShippedPrimaries;

  constructor(
    private readonly settings: BackupSettings,
    ports: { files: Pick<InstanceFiles, "exists">; hosted: Pick<HostedDatabases, "at">; log: Logger },
    primaries: (fresh: boolean) => Promise<HeldPrimary[]>,
    /** A folder of this process's own for snapshots being built (emptied at every start). */
    private readonly workDir: string,
    private readonly log: Logger,
  ) {
    this.source = new ShippedPrimaries(ports, primaries, LIST_REFRESH_MS);
  }

  async start(): Promise<void> {
    await this.source.start();
    this.backups = startBackups(this.settings, { source: this.source, workDir: this.workDir, log: this.log });
  }

  async stop(): Promise<void> {
    const b = this.backups;
    this.backups = undefined;
    this.source.stop();
    if (!b) return;
    // The last pass must see databases created since the list was last read.
    await this.source.refresh(true);
    await b.close();
  }

  async status(): Promise<ShipperStatus> {
    return this.statusNow();
  }

  /** The shipper's state now (the metrics' gauge reads it at every scrape). */
  statusNow(): ShipperStatus {
    return this.backups?.shipper.status() ?? { delayMs: 0, databases: [] };
  }

  async hold(dbId: string): Promise<void> {
    this.source.pause(dbId);
    if (!this.backups) return;
    await this.backups.shipper.idle();
    this.backups.shipper.forget(dbId);
  }

  release(dbId: string): void {
    this.source.resume(dbId);
  }
}
