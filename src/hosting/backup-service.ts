import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import path from "node:path";
import { type BackupBucketReader, openBackupBucket } from "../backup/backups.js";
import { BucketError } from "../backup/bucket.js";
import type { BackupSettings } from "../backup/settings.js";
import type { ShipperStatus } from "../backup/shipper.js";
import type {
  BackupOperations,
  DatabaseBackupState,
  RestoreOutcome,
  RestorePointsView,
} from "../domain/cluster/backup-port.js";
import { clusterErrors } from "../domain/cluster/errors.js";
import type { Instances, Placement, ReplicaPort, StoreAccess } from "../domain/core/ports.js";
import { flushClosing } from "../engine/handle-release.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import { removeDatabaseFile } from "../engine/snapshot.js";
import { AppError } from "../errors.js";
import type { Logger } from "../lib/logger.js";
import type { DatabaseRuntimes } from "./database-runtimes.js";

/** What continuous backups of this node reach. */
export interface BackupServicePorts {
  store: StoreAccess;
  files: Pick<InstanceFiles, "path" | "exists">;
  /** The processes serving the primaries ship them, and swap restored files in. */
  shipping: ShippingControl;
  runtimes: Pick<DatabaseRuntimes, "swapRestored">;
  placement: Placement;
  instances: Pick<Instances, "buildReplicas">;
  replicas: Pick<ReplicaPort, "drop" | "ensure">;
  log: Logger;
}

/**
 * Shipping of this node's primaries to the bucket, done where each primary is served (its frame
 * log lives there): the node starts and stops it, reads its state, and holds one database's
 * shipping while that database is restored.
 */
export interface ShippingControl {
  start(): Promise<void>;
  /** One last pass everywhere (bounded), then no more. */
  stop(): Promise<void>;
  status(): Promise<ShipperStatus>;
  /** No more shipping of `dbId` (after the pass in progress) until `release`; its position is forgotten. */
  hold(dbId: string): Promise<void>;
  release(dbId: string): void;
}

/**
 * Continuous backups of the primaries this node holds, and restores from the bucket. Built with
 * the other parts, started once the node knows which locations it holds (`start`), stopped at
 * shutdown after one last pass (`stop`).
 */
export class BackupService implements BackupOperations {
  private bucket: BackupBucketReader | undefined;
  private readonly restoring = new Set<string>();

  constructor(
    private readonly settings: BackupSettings,
    private readonly ports: BackupServicePorts,
  ) {}

  get bucketUrl(): string {
    return `s3://${this.settings.bucket}/${this.settings.prefix}`;
  }

  get intervalMs(): number {
    return this.settings.intervalMs;
  }

  async start(): Promise<void> {
    this.bucket = openBackupBucket(this.settings);
    await this.ports.shipping.start();
    this.ports.log.info(
      { bucket: this.bucketUrl, intervalMs: this.settings.intervalMs },
      "backup shipping started",
    );
  }

  /** Ships what is left (bounded), then stops. */
  async stop(): Promise<void> {
    const b = this.bucket;
    this.bucket = undefined;
    if (!b) return;
    await this.ports.shipping.stop();
    b.close();
  }

  async status(): Promise<{ delayMs: number; databases: DatabaseBackupState[] }> {
    if (!this.bucket) return { delayMs: 0, databases: [] };
    const s = await this.ports.shipping.status();
    return {
      delayMs: s.delayMs,
      databases: s.databases.map((d) => ({
        id: d.id,
        generation: d.generation ?? null,
        frame: d.frame ?? null,
        delayMs: d.delayMs,
        failures: d.failures,
        lastError: d.lastError ?? null,
        diverged: d.diverged ?? null,
      })),
    };
  }

  points(dbId: string): Promise<RestorePointsView | undefined> {
    return this.running().points(dbId).catch(bucketFailure);
  }

  async restore(dbId: string, location: string, at: number | undefined): Promise<RestoreOutcome> {
    if (this.restoring.has(dbId)) throw clusterErrors.restoreBusy(dbId);
    this.restoring.add(dbId);
    try {
      const b = this.running();
      // Shipping of the database stops first: the bucket must not move while the restore reads it.
      await this.ports.shipping.hold(dbId);
      try {
        const outcome = await this.restoreInto(b, dbId, location, at);
        if (outcome.kind === "restored") await this.rebuildReplicas(dbId, location);
        return outcome;
      } finally {
        this.ports.shipping.release(dbId);
      }
    } finally {
      this.restoring.delete(dbId);
    }
  }

  async restoreMissing(at: number | undefined) {
    const instances = await this.ports.store.read((r) => r.databases.allInstances());
    const held = instances.filter((i) => this.ports.placement.holds(i.location));
    const out: Array<{ id: string; location: string; outcome?: RestoreOutcome; error?: string }> = [];
    for (const i of held) {
      if (i.location !== i.primary_location || this.ports.files.exists(i.location, i.db_id)) continue;
      try {
        out.push({ id: i.db_id, location: i.location, outcome: await this.restore(i.db_id, i.location, at) });
      } catch (e) {
        out.push({ id: i.db_id, location: i.location, error: (e as Error).message });
      }
    }
    // Replicas on this node whose files went with the primaries' are built again from them.
    for (const i of held) {
      if (i.location === i.primary_location || this.ports.files.exists(i.location, i.db_id)) continue;
      if (!this.ports.files.exists(i.primary_location, i.db_id)) continue;
      await this.ports.replicas.ensure(i.db_id, i.location).catch((e: unknown) => {
        this.ports.log.error({ err: e, dbId: i.db_id, location: i.location }, "could not rebuild a replica");
      });
    }
    return out;
  }

  /**
   * Writes a database as the bucket last has it into `dest` (a file that must not exist), for a
   * replica of another node's primary to start from instead of a whole copy from that primary
   * (`SHOAL_BACKUP_SEED_REPLICAS`). The point is the primary's generation and frame, which the
   * replica then follows from; `reason` says why there is no seed (no secret in it).
   */
  async seedReplica(dbId: string, dest: string): Promise<ReplicaSeedOutcome> {
    if (!this.settings.seedReplicas) return { kind: "none", reason: "SHOAL_BACKUP_SEED_REPLICAS is false" };
    if (!this.bucket) return { kind: "none", reason: "backup shipping has not started yet" };
    const out = await this.bucket.bootstrap(dbId, dest, "replica");
    if (out.kind !== "restored")
      return { kind: "none", reason: "the bucket has no copy of this database yet" };
    // The restore's integrity check opened the file; that connection must be gone before a replica opens it.
    await flushClosing();
    const { generation, frame, lastFrame } = out;
    return { kind: "seeded", generation, frame, ...(lastFrame ? { lastFrame } : {}) };
  }

  private running(): BackupBucketReader {
    if (!this.bucket) throw clusterErrors.backupsOff();
    return this.bucket;
  }

  private async restoreInto(b: BackupBucketReader, dbId: string, location: string, at: number | undefined) {
    const started = Date.now();
    const dbPath = this.ports.files.path(location, dbId);
    const tmp = path.join(path.dirname(dbPath), `.${dbId}.restore-${randomBytes(4).toString("hex")}`);
    try {
      const outcome = await b.restore(dbId, tmp, { at, continueLog: false }).catch(bucketFailure);
      if (outcome.kind !== "restored") return outcome;
      // The restore's checks opened the file here; they must be closed before another process moves it.
      await flushClosing();
      for (const suffix of ["-wal", "-shm"]) rmSync(tmp + suffix, { force: true });
      const replaced = await this.ports.runtimes.swapRestored(dbId, dbPath, tmp, outcome.next, dbId);
      const { generation, frame, commitAt, earliest } = outcome;
      this.ports.log.info({ dbId, generation, frame, replaced }, "database restored from the backup bucket");
      return {
        kind: "restored" as const,
        generation,
        frame,
        commitAt,
        earliest,
        replaced,
        ms: Date.now() - started,
      };
    } finally {
      removeDatabaseFile(tmp);
      rmSync(`${tmp}.log`, { recursive: true, force: true });
    }
  }

  /** Replicas on this node held the replaced history; each starts over from the restored file. */
  private async rebuildReplicas(dbId: string, primary: string): Promise<void> {
    const instances = await this.ports.store.read((r) => r.databases.allInstances());
    for (const i of instances) {
      if (i.db_id !== dbId || i.location === primary || !this.ports.placement.holds(i.location)) continue;
      try {
        await this.ports.replicas.drop(dbId, i.location);
        await this.ports.instances.buildReplicas([dbId], i.location);
      } catch (e) {
        this.ports.log.error(
          { err: e, dbId, location: i.location },
          "could not rebuild a replica after a restore",
        );
      }
    }
  }
}

export type ReplicaSeedOutcome =
  | { kind: "seeded"; generation: number; frame: number; lastFrame?: Buffer }
  | { kind: "none"; reason: string };

/** A failure reading the bucket or rebuilding from it, as the operator's answer says it. */
function bucketFailure(e: unknown): never {
  if (e instanceof AppError) throw e;
  const reason = e instanceof Error ? e.message : String(e);
  if (e instanceof BucketError) throw clusterErrors.bucketUnavailable(reason);
  throw clusterErrors.backupDamaged(reason);
}
