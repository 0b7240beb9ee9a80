import { HranaError } from "./errors.js";

/** A stream refused because a limit on open streams was reached; the request itself was fine. */
export class StreamLimitError extends HranaError {
  constructor(message: string) {
    super("STREAMS_TOO_MANY", message);
  }
}

/**
 * Open streams per database, held to a limit: each stream may hold a connection (and its file
 * descriptors) for as long as it stays open, so one database's clients opening streams without
 * end must not take every connection the server has.
 */
export class StreamCounts {
  private readonly open = new Map<string, number>();

  constructor(readonly perDatabase: number) {}

  /** Counts a new stream of database `id`, or throws StreamLimitError when it already has as many as allowed. */
  take(id: string, name: string): void {
    const n = this.open.get(id) ?? 0;
    if (n >= this.perDatabase) {
      throw new StreamLimitError(
        `database ${name} already has ${this.perDatabase} streams open, the most the server allows ` +
          "(SHOAL_MAX_STREAMS_PER_DATABASE): close streams (transactions, connections) you no longer use",
      );
    }
    this.open.set(id, n + 1);
  }

  release(id: string): void {
    const n = (this.open.get(id) ?? 1) - 1;
    if (n <= 0) this.open.delete(id);
    else this.open.set(id, n);
  }

  /** Streams open on database `id`, for tests and diagnostics. */
  of(id: string): number {
    return this.open.get(id) ?? 0;
  }
}
