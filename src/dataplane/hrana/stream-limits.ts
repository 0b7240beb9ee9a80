import type { HostedDatabase } from "../../engine/hosted-database.js";
import { HranaError } from "./errors.js";

/** A stream refused because a limit on open streams was reached; the request itself was fine. */
export class StreamLimitError extends HranaError {
  constructor(message: string) {
    super("STREAMS_TOO_MANY", message);
  }
}

/**
 * Counts a new stream on `db`, or throws StreamLimitError when it already has `limit` open: each
 * stream may hold a connection (and its file descriptors) for as long as it stays open, so one
 * database's clients opening streams without end must not take every connection the server has.
 */
export function takeStream(db: HostedDatabase, limit: number, name: string): void {
  if (db.takeStream(limit)) return;
  throw new StreamLimitError(
    `database ${name} already has ${limit} streams open, the most the server allows ` +
      "(SHOAL_MAX_STREAMS_PER_DATABASE): close streams (transactions, connections) you no longer use",
  );
}
