import type { DiskSpacePort } from "../../domain/core/disk.js";
import type { DataAccess } from "../../domain/data-access/open.js";
import type { EngineConnection } from "../../engine/connection.js";
import type { HostedDatabases } from "../../engine/hosted-databases.js";
import type { UsageRecorder } from "../../hosting/usage-tally.js";
import type { AttachTarget } from "./authorize.js";

/** What a Hrana stream stands on: the engine's parts, the meter, its limits and the write fence. */
export interface StreamLimits {
  /** An interactive write transaction is rolled back after this long. */
  txnTimeoutMs: number;
  /** How long a writer waits for another stream's write transaction. */
  lockWaitMs: number;
}

/** A step after a statement ran, which may fail without failing the statement. */
export type AfterStatementStep = "usage" | "schema-journal";

export interface StreamServices {
  /** The databases this node runs; a stream's connection, write lock and frame log are its database's. */
  hosted: HostedDatabases;
  meter: UsageRecorder;
  limits: StreamLimits;
  /** Streams one database may have open at once (counted by its HostedDatabase). */
  maxStreamsPerDatabase: number;
  /** Resolves an `ATTACH` target: a database of the same organization, by name. */
  resolveAttach(access: DataAccess, name: string): Promise<AttachTarget | undefined>;
  /** Whether this node may write to the database's primary now (its lease; see hosting/primary-leases.ts). */
  fence?: {
    mayWrite(database: DataAccess["database"]): boolean;
    /** Renews the leases; throws when this node still may not write. */
    acquire(database: DataAccess["database"]): Promise<void>;
    /** Throws when the group's primaries here answer nothing (a standby can't be dropped). */
    refuseIfIsolated(database: DataAccess["database"]): void;
    /**
     * After a commit (`index` tells where it ended): undefined when no standby waits, else resolves
     * once each has it (rejects with WRITE_UNCONFIRMED when the outcome can't be known).
     */
    confirm(database: DataAccess["database"], index: () => number): Promise<void> | undefined;
  };
  /** The data folder's free space: writes that grow a database are refused below its reserve. */
  disk?: DiskSpacePort;
  /** A step after a statement ran failed: logged and counted, the statement's answer stands. */
  afterCommitFailed(step: AfterStatementStep, dbId: string, error: unknown): void;
  /** Told, on the committing connection, about each committed transaction of a schema database that ran DDL. */
  schemaChanged?(access: DataAccess, conn: EngineConnection, statements: string[]): void;
}
