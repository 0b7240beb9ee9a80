import type { RowBudget } from "../../engine/connection.js";
import { ResponseTooLargeError } from "../../engine/sqlite-errors.js";

export interface ResponseLimits {
  /** The most one response may carry (SHOAL_MAX_RESPONSE_BYTES). */
  maxBytes: number;
  /** The most all large responses together may hold while built or unread (SHOAL_MAX_TOTAL_RESPONSE_BYTES). */
  maxTotalBytes: number;
}

/**
 * What a response may cost before it counts against the process-wide total: small answers (a
 * point read, an insert) are never refused for the server's load, and many of them at once still
 * hold little memory.
 */
const UNCOUNTED_BYTES = 64 * 1024;

/**
 * The bytes of large responses, from their first row until their client has read them (or went
 * away): what slow readers and big results hold in memory, across the process, like sqld's
 * `max_total_response_size`.
 */
export class ResponseBytes {
  inFlight = 0;

  constructor(readonly limits: ResponseLimits) {}

  /** A budget for one response. */
  budget(): ResponseBudget {
    return new ResponseBudget(this);
  }
}

/**
 * One response's rows, counted as they are produced (see RowBudget): past the limit the statement
 * stops and fails with RESPONSE_TOO_LARGE, so nothing more is read or kept. `settle` gives the
 * response's share of the total back once it has been written out.
 */
export class ResponseBudget implements RowBudget {
  used = 0;
  private counted = 0;

  constructor(private readonly shared: ResponseBytes) {}

  take(bytes: number): void {
    const { maxBytes, maxTotalBytes } = this.shared.limits;
    if (this.used + bytes > maxBytes) {
      throw new ResponseTooLargeError(
        `the response would be larger than ${maxBytes} bytes, the most the server sends ` +
          "(SHOAL_MAX_RESPONSE_BYTES): select fewer rows or smaller values, or page with LIMIT",
      );
    }
    this.used += bytes;
    const more = Math.max(0, this.used - UNCOUNTED_BYTES) - this.counted;
    if (more <= 0) return;
    if (this.shared.inFlight + more > maxTotalBytes) {
      this.used -= bytes;
      throw new ResponseTooLargeError(
        `the server already holds ${maxTotalBytes} bytes of large responses for its clients ` +
          "(SHOAL_MAX_TOTAL_RESPONSE_BYTES): retry in a moment, or select less",
      );
    }
    this.shared.inFlight += more;
    this.counted += more;
  }

  /** Whether the response is small enough to build and send in one piece. */
  get small(): boolean {
    return this.used <= UNCOUNTED_BYTES;
  }

  /** The response was written out or abandoned: its bytes leave the total. */
  settle(): void {
    this.shared.inFlight -= this.counted;
    this.counted = 0;
  }
}
