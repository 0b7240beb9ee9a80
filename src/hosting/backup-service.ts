import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import path from "node:path";
import { type Backups, startBackups } from "../backup/backups.js";
import { BucketError } from "../backup/bucket.js";
import type { BackupSettings } from "../backup/settings.js";
import type {
  BackupOperations,
  DatabaseBackupState,
  RestoreOutcome,
  RestorePointsView,
} from "../domain/cluster/backup-port.js";
import { clusterErrors } from "../domain/cluster/errors.js";
import type { Instances, Placement, ReplicaPort, StoreAccess } from "../domain/core/ports.js";
import { flushClosing } from "../engine/handle-release.js";
import type { HostedDatabases } from "../engine/hosted-databases.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import { removeDatabaseFile } from "../engine/snapshot.js";
import { AppError } from "../errors.js";
import type { Logger } from "../lib/logger.js";
import { HeldPrimaries } from "./backup-source.js";
import { swapInRestored } from "./backup-swap.js";

/** How often the list of primaries to ship is read from the store. */
const LIST_REFRESH_MS = 1000;

/** What continuous backups of this node reach. */
export interface BackupServicePorts {
  store: StoreAccess;
  files: Pick<InstanceFiles, "path" | "exists">;
  hosted: HostedDatabases;
  placement: Placement;
  instances: Pick<Instances, "buildReplicas">;
  replicas: Pick<ReplicaPort, "drop" | "ensure">;
  log: Logger;
}

/**
 * Continuous backups of the primaries this node holds, and restores from the bucket. Built with
 * the other parts, started once the node knows which locations it holds (`start`), stopped at
 * shutdown after one last pass (`stop`).
 */
export class BackupService implements BackupOperations {
  private backups: Backups | undefined;
  private readonly source: HeldPrimaries;
  private readonly restoring = new Set<string>();

  constructor(
    private readonly settings: BackupSettings,
    private readonly ports: BackupServicePorts,
    private readonly workDir: string,
  ) {
    this.source = new HeldPrimaries(ports, LIST_REFRESH_MS);
  }

  get bucketUrl(): string {
    return `s3://${this.settings.bucket}/${this.settings.prefix}`;
  }

  get intervalMs(): number {
    return this.settings.intervalMs;
  }

  /** How far the bucket trails this node (ms), for the `shoal_backup_delay_seconds` gauge. */
  get delayMs(): number {
    return this.backups?.shipper.status().delayMs ?? 0;
  }

  async start(): Promise<void> {
    await this.source.start();
    this.backups = startBackups(this.settings, {
      source: this.source,
      workDir: this.workDir,
      log: this.ports.log,
    });
    this.ports.log.info(
      { bucket: this.bucketUrl, intervalMs: this.settings.intervalMs },
      "backup shipping started",
    );
  }

  /** Ships what is left (bounded), then stops. */
  async stop(): Promise<void> {
    const b = this.backups;
    this.backups = undefined;
    this.source.stop();
    if (!b) return;
    // The last pass must see databases created since the list was last read.
    await this.source.refresh();
    await b.close();
  }

  status(): { delayMs: number; databases: DatabaseBackupState[] } {
    const s = this.backups?.shipper.status();
    if (!s) return { delayMs: 0, databases: [] };
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
    // Shipping of the database stops first: the bucket must not move while the restore reads it.
    this.source.pause(dbId);
    try {
      const b = this.running();
      await b.shipper.idle();
      b.shipper.forget(dbId);
      const outcome = await this.restoreInto(b, dbId, location, at);
      if (outcome.kind === "restored") await this.rebuildReplicas(dbId, location);
      return outcome;
    } finally {
      this.source.resume(dbId);
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
    if (!this.backups) return { kind: "none", reason: "backup shipping has not started yet" };
    const out = await this.backups.bootstrap(dbId, dest, "replica");
    if (out.kind !== "restored")
      return { kind: "none", reason: "the bucket has no copy of this database yet" };
    // The restore's integrity check opened the file; that connection must be gone before a replica opens it.
    await flushClosing();
    const { generation, frame, lastFrame } = out;
    return { kind: "seeded", generation, frame, ...(lastFrame ? { lastFrame } : {}) };
  }

  private running(): Backups {
    if (!this.backups) throw clusterErrors.backupsOff();
    return this.backups;
  }

  private async restoreInto(b: Backups, dbId: string, location: string, at: number | undefined) {
    const started = Date.now();
    const dbPath = this.ports.files.path(location, dbId);
    const tmp = path.join(path.dirname(dbPath), `.${dbId}.restore-${randomBytes(4).toString("hex")}`);
    try {
      const outcome = await b.restore(dbId, tmp, { at, continueLog: false }).catch(bucketFailure);
      if (outcome.kind !== "restored") return outcome;
      const replaced = await swapInRestored(this.ports, dbPath, tmp, outcome.next, dbId);
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
