/**
 * What the backup needs from the engine, and nothing more: the frame log of each primary as a few
 * reads. The engine's `FrameLog` has this shape today; keeping the backup to this narrow view means
 * a rework of the log's insides (files, pruning, limits) can't break shipping unless these few
 * meanings change, and the tests of both would say so.
 */
export interface BackupLog {
  /** The primary's database file: between checkpoints it holds its current generation's start. */
  readonly dbPath: string;
  /** The last committed frame as of the last commit; no file is read. */
  position(): { generation: number; frame: number };
  /** Where every readable generation lies in the replication index, re-read from the WAL. */
  history(): {
    current: { generation: number; startIndex: number; frames: number };
    archived: ReadonlyArray<{ generation: number; startIndex: number; frames: number }>;
    lost: readonly number[];
  };
  /** The same generations with when each finished one ended. */
  chain(): {
    current: number;
    archived: ReadonlyArray<{ generation: number; frames: number; endedAt: number }>;
    lost: readonly number[];
  };
  /** Frames `start`..`end - 1` (1-based) of a generation: the current one from the WAL, a finished one from its archive. */
  read(
    generation: number,
    start: number,
    end: number,
  ):
    | { kind: "frames"; data: Buffer }
    | { kind: "past-end"; latest: number }
    | { kind: "gone"; latest: number };
  /** When each commit of a generation was made: the frame count after it, and the time (ms). */
  commits(generation: number): ReadonlyArray<{ frames: number; at: number }>;
}

/** One primary database this node holds, as the shipper is told about it. */
export interface BackupPrimary {
  id: string;
  /** The database file. */
  path: string;
  /** Written into the database's `database.json` (organization, name, location, node...). */
  labels?: Readonly<Record<string, string>>;
}

export interface BackupSource {
  /** The primaries this node holds now; called on every pass, so it should be cheap. */
  primaries(): Iterable<BackupPrimary>;
  /** The frame log of a primary's file (its `HostedDatabase.frameLog`). */
  log(path: string): BackupLog;
}
