import { type DiskSpacePort, diskReserveMessage } from "../../domain/core/disk.js";
import { statementKind } from "../../metrics/statement-kind.js";
import { HranaError } from "./errors.js";

/**
 * Statements that still run while free space is below the reserve: those that free space or
 * can't grow a database by more than a page or two of the WAL (transaction control, PRAGMAs).
 * A `DELETE` written with a `WITH` clause is refused with the rest: write it without one.
 */
const RUN_AT_RESERVE: ReadonlySet<string> = new Set([
  "delete",
  "drop",
  "vacuum",
  "pragma",
  "begin",
  "commit",
  "rollback",
  "savepoint",
  "release",
  "detach",
]);

/**
 * Refuses, before it runs, a statement that writes and may grow the database while the server's
 * free disk space is below its reserve (`DISK_RESERVE_REACHED`: nothing was written).
 */
export function refuseAtReserve(disk: DiskSpacePort, sql: string): void {
  const state = disk.now();
  if (!state.low || RUN_AT_RESERVE.has(statementKind(sql))) return;
  throw new HranaError(
    "DISK_RESERVE_REACHED",
    diskReserveMessage(state, "a write that may grow the database"),
  );
}
