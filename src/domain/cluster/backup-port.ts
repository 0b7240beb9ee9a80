import type { BasePorts } from "../core/ports.js";

/** One database's shipping on this node, as the backup reports it. */
export interface DatabaseBackupState {
  id: string;
  /** Where the bucket's copy ends; null until the bucket was read. */
  generation: number | null;
  frame: number | null;
  /** How long the oldest commit the bucket lacks has waited (0: the bucket has everything). */
  delayMs: number;
  failures: number;
  lastError: string | null;
  /** Why nothing is shipped (this node's log is behind the bucket's copy), if so. */
  diverged: string | null;
}

/** What a restore did, or why it couldn't. */
export type RestoreOutcome =
  | {
      kind: "restored";
      generation: number;
      frame: number;
      /** Its last commit's time (ms); null: a snapshot's state with no commit replayed. */
      commitAt: number | null;
      earliest: number;
      /** An existing file was replaced (false: the file was missing). */
      replaced: boolean;
      ms: number;
    }
  | { kind: "before-history"; earliest: number }
  | { kind: "future"; now: number }
  | { kind: "missing" };

/** What the bucket can restore a database to. */
export interface RestorePointsView {
  earliest: number;
  latest: { generation: number; frame: number; committedAt: number };
  snapshots: Array<{ generation: number; frame: number; at: number }>;
  objects: number;
  bytes: number;
}

/** Continuous backups of this node's primaries (`hosting/backup-service.ts`), when configured. */
export interface BackupOperations {
  readonly bucketUrl: string;
  readonly intervalMs: number;
  status(): Promise<{ delayMs: number; databases: DatabaseBackupState[] }>;
  points(dbId: string): Promise<RestorePointsView | undefined>;
  /**
   * Rebuilds a primary this node holds from the bucket (the latest shipped point, or the state at
   * `at`) into a new file, and only then puts it in place of the database's file.
   */
  restore(dbId: string, location: string, at: number | undefined): Promise<RestoreOutcome>;
  /** Restores every primary of a location this node holds whose file is missing. */
  restoreMissing(
    at: number | undefined,
  ): Promise<Array<{ id: string; location: string; outcome?: RestoreOutcome; error?: string }>>;
}

/** What the backup verbs reach: `backups` is undefined where `SHOAL_BACKUP_URL` is unset. */
export interface BackupPorts extends BasePorts {
  backups: BackupOperations | undefined;
}
