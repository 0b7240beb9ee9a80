/**
 * Named places where a test can make Shoal fail on purpose (`SHOAL_FAILPOINTS`), to check that
 * what follows a failure there holds: above all, that a step after a commit which fails never
 * turns the committed statement into an error answer. Off unless the setting names them; a
 * disarmed failpoint costs one comparison.
 */
export const FAILPOINTS = [
  /** The frame log's record of a commit, and the rollover that may follow it. */
  "after-commit.frame-log",
  /** The frame log's state file written at the end of a rollover, after its checkpoint. */
  "after-commit.rollover-meta",
  /** Usage counting and statement metrics for a statement that ran. */
  "after-commit.usage",
  /** The notices of a new commit: replication, read-your-writes waiters, backup shipping. */
  "after-commit.notice",
  /** The schema database's journal of a DDL commit, for its followers. */
  "after-commit.schema-journal",
] as const;

export type Failpoint = (typeof FAILPOINTS)[number];

/** The error a failpoint throws: shaped like the disk-full error it mostly stands for. */
export class InjectedFault extends Error {
  readonly code = "ENOSPC";
  constructor(readonly failpoint: Failpoint) {
    super(`ENOSPC: fault injected at ${failpoint} (SHOAL_FAILPOINTS)`);
    this.name = "InjectedFault";
  }
}

let armed: ReadonlySet<string> = new Set();

/** Arms the failpoints named (and disarms the rest), for this process. */
export function armFailpoints(names: readonly Failpoint[]): void {
  armed = new Set(names);
}

/** Throws InjectedFault when `name` is armed. */
export function failpoint(name: Failpoint): void {
  if (armed.size !== 0 && armed.has(name)) throw new InjectedFault(name);
}
