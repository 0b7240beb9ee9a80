import type { DumpFiles } from "../../engine/dump-files.js";
import type { DatabaseWithPlacement } from "../../store/databases.js";
import type { Ctx } from "../core/context.js";
import type { DiskSpacePort } from "../core/disk.js";
import type {
  BasePorts,
  DataPlaneCache,
  FileFacts,
  Instances,
  Placement,
  ReplicaStatus,
  UsageFlush,
} from "../core/ports.js";
import type { EncryptionPlan } from "./encryption-plan.js";

/** What the databases area's verbs reach. */
export interface DatabasePorts extends BasePorts {
  /** Suffix of database hostnames: `<db>-<org>.<dbDomain>`. */
  dbDomain: string;
  /** How long deleted databases and groups stay restorable; 0: not kept. */
  deletedRetentionMs: number;
  version: string;
  files: FileFacts;
  /** Uploaded SQL dumps waiting to seed new databases. */
  dumps: DumpShelf;
  content: DatabaseContent;
  schema: SchemaQueue;
  uploads: PendingUploads;
  instances: Instances;
  placement: Placement;
  /** The data folder's free space: files are made only above its reserve. */
  disk: DiskSpacePort;
  replicas: ReplicaStatus;
  directory: DataPlaneCache;
  meter: UsageFlush;
}

export type DatabaseCtx = Ctx<DatabasePorts>;

/** The dumps kept for `seed: {type: "dump"}` (`<data>/dumps`). */
export type DumpShelf = Pick<DumpFiles, "find" | "save" | "remove" | "sweep" | "pendingBytes">;

/** Builds a new database's first content (`hosting/content-builder.ts`). */
export interface DatabaseContent {
  /**
   * Builds the primary file of database `id` in `location` from its plan: empty, a copy, a dump,
   * an empty file waiting for an upload, or a schema database's schema. On failure nothing is left.
   */
  build(location: string, id: string, plan: ContentPlan, maxBytes: number): Promise<BuiltContent>;
  /** Removes a built file whose row could not be committed. */
  discard(location: string, id: string): void;
}

/**
 * Everything that touches the schema of a schema database's children runs in that database's
 * queue (`hosting/schema-propagation.ts`): a child created there never misses a change.
 */
export interface SchemaQueue {
  run<T>(schemaDbId: string, task: () => Promise<T>): Promise<T>;
  /** Brings every child of a schema database up to its latest change, in the background. */
  propagate(schemaDbId: string): void;
}

/** Uploads of whole database files in progress (`hosting/upload-installer.ts`). */
export interface PendingUploads {
  /** Removes what an upload to a deleted database left behind. */
  discard(location: string, dbId: string): void;
}

/** A validated seed: where a new database's first content comes from. */
export type Seed =
  /** A copy of another database of the organization, now or (`at`, ms) as it was then. */
  | { type: "database"; source: string; at?: number }
  | { type: "dump"; url: string }
  /** No content until a SQLite file is uploaded through the data plane. */
  | { type: "database_upload" };

/** What a built seed adds to the new database's row. */
export interface SeedFacts {
  parentId?: string;
  branchedAt?: string;
}

/** What a new database starts from, resolved and checked before anything is built. */
export interface ContentPlan {
  seed: Seed | undefined;
  /** The database copied by a `database` seed. */
  source?: DatabaseWithPlacement;
  /** The schema database a child follows. */
  schemaParent?: DatabaseWithPlacement;
  dumpId?: string;
  /** For a database encrypted at rest: its parameters and the key to build it with. */
  encryption?: EncryptionPlan;
}

/** The row facts of a built database beyond its name and placement. */
export interface BuiltContent extends SeedFacts {
  schemaId?: string;
  schemaSeq?: number;
  awaitingUpload?: boolean;
}
