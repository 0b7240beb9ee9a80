import type {
  DataPlaneCache,
  InstanceRef,
  Instances,
  ReplicaPort,
  StoreAccess,
} from "../domain/core/ports.js";
import type { KeptFiles } from "../engine/kept-files.js";
import type { Logger } from "../lib/logger.js";
import type { DatabaseRuntimes } from "./database-runtimes.js";

/** What making and removing instances reaches. */
export interface InstanceLifecyclePorts {
  store: StoreAccess;
  runtimes: Pick<DatabaseRuntimes, "remove">;
  replicas: Pick<ReplicaPort, "ensure" | "drop">;
  directory: DataPlaneCache;
  kept: KeptFiles;
  log: Logger;
}

/** Builds the replicas of databases and removes the instances of deleted ones. */
export class InstanceLifecycle implements Instances {
  constructor(private readonly ports: InstanceLifecyclePorts) {}

  /**
   * Removes instances once the rows that named them are committed away: a primary's connections
   * are retired and its files (and frame log) removed; a replica is dropped by its location. The
   * data plane's cache forgets the databases first. A failure leaves an orphan file, never a
   * dangling row; the start-up reconciliation sweeps orphans. With `keep`, a primary's files are
   * moved aside (KeptFiles) once its connections are retired, for a restore to bring back.
   */
  async remove(instances: readonly InstanceRef[], opts: { keep?: boolean } = {}): Promise<void> {
    const deps = this.ports;
    deps.directory.invalidate();
    for (const i of instances) {
      try {
        if (i.primary) {
          // A primary's file goes only with its row: never remove the file of a database that
          // still exists (say, one moved to another organization while this removal was planned).
          if (await deps.store.read((r) => r.databases.findById(i.dbId))) {
            deps.log.warn(
              { dbId: i.dbId, location: i.location },
              "kept the file of a database that still exists",
            );
            continue;
          }
          await deps.runtimes.remove(i.location, i.dbId, opts.keep === true);
          if (opts.keep) deps.kept.keep(i.location, i.dbId);
        } else {
          await deps.replicas.drop(i.dbId, i.location);
        }
      } catch (e) {
        deps.log.error({ err: e, dbId: i.dbId, location: i.location }, "could not remove an instance");
      }
    }
  }

  restoreKept(location: string, dbId: string): void {
    this.ports.kept.restore(location, dbId);
  }

  keptBytes(dbId: string): number {
    return this.ports.kept.sizeOf(dbId);
  }

  dropKept(dbId: string): void {
    this.ports.kept.drop(dbId);
  }

  /**
   * Builds the replicas of databases in a location, a few at a time, logging progress for large
   * groups. Throws the first failure after the others finished.
   */
  async buildReplicas(dbIds: readonly string[], location: string): Promise<void> {
    const deps = this.ports;
    const started = Date.now();
    let done = 0;
    let failure: unknown;
    const queue = [...dbIds];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        try {
          await deps.replicas.ensure(id, location);
        } catch (e) {
          failure ??= e;
        }
        done++;
        if (done % 100 === 0) deps.log.info({ location, done, total: dbIds.length }, "building replicas");
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, dbIds.length) }, worker));
    if (dbIds.length > 0)
      deps.log.info({ location, replicas: dbIds.length, ms: Date.now() - started }, "replicas built");
    if (failure) throw failure;
  }
}
