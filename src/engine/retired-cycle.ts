import { frameLogFolder, peekMeta, sameSalts, type WalSalts } from "./frame-log-meta.js";
import { walSalts } from "./wal.js";

/**
 * A generation ends with a RESTART checkpoint: every frame goes into the database file, and
 * SQLite starts the WAL over (new salts, from its first frame) at the next write, instead of
 * truncating the file now. Truncating a 16 MB WAL was most of what ending a generation cost the
 * statement thread (about 20 ms of 25 in a shard under inserts; the checkpoint itself about 3).
 *
 * Until that next write, the WAL still holds the finished cycle: the frame log remembers its salts
 * (`Meta.retired`) and counts none of its frames. One case needs more: a process that opens the
 * database after a crash rebuilds the wal-index from the WAL and, finding those frames not yet
 * checkpointed by its count, would append the next writes to the old cycle, behind frames the log
 * already archived. So the first connection a process opens to such a database truncates the WAL
 * before anything runs on it (see HostedDatabases).
 */

/** How a WAL's frames relate to the cycle the frame log retired. */
export type RetiredCycle =
  /** The WAL is in another cycle (or empty): its frames are the current generation's. */
  | "other"
  /** The WAL still holds the retired cycle and nothing after it. */
  | "retired"
  /** Frames were added to the retired cycle: written where the frame log can't serve them. */
  | "continued";

export function retiredCycle(
  wal: { header: WalSalts; committed: number } | undefined,
  retired: (WalSalts & { frames: number }) | undefined,
): RetiredCycle {
  if (!wal || !retired || !sameSalts(wal.header, retired)) return "other";
  return wal.committed > retired.frames ? "continued" : "retired";
}

/**
 * Whether `dbPath`'s WAL still holds the cycle its frame log retired: two small reads, for a
 * process's first connection to a database (most have no WAL then, or no frame log).
 */
export function leftInRetiredCycle(dbPath: string): boolean {
  const salts = walSalts(`${dbPath}-wal`);
  if (!salts) return false;
  const meta = peekMeta(frameLogFolder(dbPath));
  // A cycle being retired when the process ended counts too (see FrameLog's `abandonRetiring`).
  const retired = meta?.retired ?? meta?.retiring;
  return retired !== undefined && sameSalts(salts, retired);
}
