import { apiError, unreachable } from "./api-client.js";
import { DATA_PLANE_HINTS } from "./database.js";
import { CliError } from "./errors.js";

/** A value as Hrana sends it over JSON. */
export type HranaValue =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

export interface StatementResult {
  cols: { name: string | null; decltype?: string | null }[];
  rows: HranaValue[][];
  affected_row_count: number;
  last_insert_rowid: string | null;
}

interface HranaErrorBody {
  message: string;
  code?: string;
}

/** A statement the database refused, with sqld's code (SQLITE_CONSTRAINT, SQL_PARSE_ERROR, ...). */
export class SqlError extends CliError {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(code ? `${message} (${code})` : message);
  }
}

export interface BatchOutcome {
  results: (StatementResult | null)[];
  /** The first step that failed, with its error. */
  failed?: { step: number; error: SqlError };
}

/**
 * A Hrana-over-HTTP stream to one database (`v3/pipeline`), the protocol every libSQL client
 * speaks. The stream is kept from one call to the next, so a transaction opened with BEGIN spans
 * statements typed one at a time; a stream the server closed for idling is replaced silently
 * unless a transaction was open on it.
 */
export class HranaStream {
  private baton: string | null = null;
  private inTransaction = false;

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  async execute(sql: string): Promise<StatementResult> {
    const [result] = await this.pipeline([{ type: "execute", stmt: { sql, want_rows: true } }]);
    const r = result as { type: string; response?: { result: StatementResult }; error?: HranaErrorBody };
    if (r.type === "error") throw new SqlError(r.error!.message, r.error!.code);
    return r.response!.result;
  }

  /**
   * Runs statements one after the other in one request, each only if the one before it succeeded
   * (a script stops at its first error). With `rollbackOnFailure`, a failure also rolls back the
   * transaction the statements opened.
   */
  async batch(statements: string[], rollbackOnFailure = false): Promise<BatchOutcome> {
    const steps: unknown[] = statements.map((sql, i) => ({
      stmt: { sql, want_rows: true },
      ...(i > 0 ? { condition: { type: "ok", step: i - 1 } } : {}),
    }));
    // A script that opened a transaction leaves nothing half-done behind when it fails.
    if (rollbackOnFailure && statements.length > 0) {
      const condition = { type: "not", cond: { type: "ok", step: statements.length - 1 } };
      steps.push({ stmt: { sql: "ROLLBACK", want_rows: false }, condition });
    }
    const [result] = await this.pipeline([{ type: "batch", batch: { steps } }]);
    const r = result as {
      type: string;
      response?: {
        result: { step_results: (StatementResult | null)[]; step_errors: (HranaErrorBody | null)[] };
      };
      error?: HranaErrorBody;
    };
    if (r.type === "error") throw new SqlError(r.error!.message, r.error!.code);
    const { step_results, step_errors } = r.response!.result;
    const failedAt = step_errors.findIndex((e) => e !== null);
    const outcome: BatchOutcome = { results: step_results.slice(0, statements.length) };
    if (failedAt !== -1) {
      const e = step_errors[failedAt]!;
      outcome.failed = { step: failedAt, error: new SqlError(e.message, e.code) };
    }
    return outcome;
  }

  /** Ends the stream (rolling back a transaction left open). */
  async close(): Promise<void> {
    if (this.baton === null) return;
    try {
      await this.post({ baton: this.baton, requests: [{ type: "close" }] });
    } catch {
      // the server drops idle streams by itself
    }
    this.baton = null;
  }

  private async pipeline(requests: unknown[]): Promise<unknown[]> {
    const body = { baton: this.baton, requests: [...requests, { type: "get_autocommit" }] };
    let answer = await this.post(body);
    if (answer.expired && !this.inTransaction && this.baton !== null) {
      this.baton = null;
      answer = await this.post({ ...body, baton: null });
    }
    if (answer.expired) {
      this.baton = null;
      this.inTransaction = false;
      throw new CliError(
        "the transaction was idle too long: the server rolled it back",
        "start it again (BEGIN); the server closes a transaction left idle for its stream timeout",
      );
    }
    const { baton, results } = answer.body!;
    this.baton = baton;
    const auto = results[results.length - 1] as { type: string; response?: { is_autocommit: boolean } };
    this.inTransaction = auto.type === "ok" && auto.response?.is_autocommit === false;
    return results.slice(0, -1);
  }

  private async post(
    body: unknown,
  ): Promise<{ expired: boolean; body?: { baton: string | null; results: unknown[] } }> {
    let res: Response;
    try {
      res = await fetch(`${this.url}v3/pipeline`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    } catch (e) {
      throw unreachable(this.url, e);
    }
    const text = await res.text();
    if (!res.ok) {
      if (res.status === 400 && text.includes("STREAM_EXPIRED")) return { expired: true };
      throw apiError(res.status, text, DATA_PLANE_HINTS);
    }
    return { expired: false, body: JSON.parse(text) as { baton: string | null; results: unknown[] } };
  }
}
