import type { DatabaseLookup } from "../domain/data-access/ports.js";
import type { Logger } from "../lib/logger.js";

/** Work on a replica that must stop, with nothing left to do (see `ReleasedReplicas.run`). */
export class ReplicaWorkStopped extends Error {}

/**
 * A replica here whose file became its database's primary (a failover to this location): a build,
 * adopt or rebuild of it begun before that moment must not go on. Opening libSQL's embedded
 * replica on a primary's file would sync another history into it, and a rebuild would delete it.
 */
export class ReplicaAtPrimaryError extends ReplicaWorkStopped {
  constructor(dbId: string, location: string) {
    super(`${dbId}/${location}: its location holds the database's primary now; no replica is kept there`);
  }
}

/** Replication was shut down while a build or rebuild was on its way: nothing more is written. */
export class ReplicationClosedError extends ReplicaWorkStopped {
  constructor() {
    super("replication is shut down");
  }
}

/** Releases seen so far, so work on a replica can tell whether one happened since it began. */
export class ReleasedReplicas {
  private count = 0;
  private readonly at = new Map<string, number>();

  constructor(
    private readonly directory: Pick<DatabaseLookup, "find">,
    private readonly log: Logger,
    /** Whether replication is shut down: then no work on a replica goes on either. */
    private readonly closed: () => boolean = () => false,
  ) {}

  /** The replica of `dbId` in `location` is let go of: its file is becoming the primary's. */
  release(dbId: string, location: string): void {
    this.at.set(`${dbId}/${location}`, this.count++);
  }

  /** Throws when the replica was released after `since` (a `run`'s mark), or replication shut down. */
  check(dbId: string, location: string, since: number): void {
    if (this.closed()) throw new ReplicationClosedError();
    if ((this.at.get(`${dbId}/${location}`) ?? -1) >= since) throw new ReplicaAtPrimaryError(dbId, location);
  }

  /** `check`, and throws the same once the database's record names `location` its primary. */
  async stillReplica(dbId: string, location: string, since: number): Promise<void> {
    this.check(dbId, location, since);
    const db = await this.directory.find({ id: dbId });
    if (db?.primary_location === location) throw new ReplicaAtPrimaryError(dbId, location);
    this.check(dbId, location, since);
  }

  /**
   * Runs work on the replica of `dbId` in `location` unless its file is (or, before the work is
   * done, becomes) the database's primary, or replication shuts down meanwhile: the work's checks
   * then stop it, with nothing to do.
   */
  async run(dbId: string, location: string, work: (since: number) => Promise<void>): Promise<void> {
    try {
      await work(this.count);
    } catch (e) {
      if (!(e instanceof ReplicaWorkStopped)) throw e;
      this.log.debug({ dbId, location, reason: e.message }, "work on a replica stopped");
    }
  }
}
