import type { DataAccess } from "../../domain/data-access/open.js";
import type { ExecResult, SqlValue } from "../../engine/connection.js";
import { FORWARDED_BY } from "../forward/proof.js";
import type { DataPlanePeers } from "../replica-notify.js";
import { passedOn } from "./error-codes.js";
import { HranaError, ProtocolError } from "./errors.js";
import type { Batch, Stmt } from "./requests.js";
import type { StmtResultJson } from "./results.js";

/** A statement result as it arrives from another node: JSON parsed, its rows plain arrays. */
type ReceivedStmtResult = Omit<StmtResultJson, "rows"> & { rows: unknown[][] };

import type { SqlStore } from "./sql-store.js";
import type { BatchOutcome, DescribeResult, SqlStream } from "./stream.js";
import { decodeValue, encodeValue } from "./values.js";

/**
 * Set on the primary node's answer to a forwarded request when a write in it was answered before
 * the forwarding location's replica had it (its wait ran out): that node's reads there go to the
 * primary until its replica has pulled again (dataplane/lagging-replicas.ts).
 */
export const REPLICA_BEHIND = "x-shoal-replica-behind";

/** How long a forwarded request may take before this node gives up on the primary's node. */
const FORWARD_TIMEOUT_MS = 30_000;

type Result = { type: "ok"; response: Record<string, unknown> } | { type: "error"; error: HranaError };

/**
 * The primary of a database whose primary location another node holds, as a stream: each request
 * is sent to that node as a Hrana v3 pipeline on the same location (`/db/<org>/<db>@<location>`),
 * with the client's own token, so the primary's node checks the token as if the client had come
 * to it, and holds the answer until this location's replica has the write (read-your-writes).
 * The stream's baton is that node's; this stream keeps it between requests.
 */
export class RemotePrimaryStream implements SqlStream {
  private baton: string | null = null;
  private autocommit = true;
  private closed = false;

  constructor(
    public access: DataAccess,
    readonly sqls: SqlStore,
    private readonly location: string,
    private readonly peers: DataPlanePeers,
    /** The primary's node said this location's replica may lack a write it answered. */
    private readonly onBehind?: () => void,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  isAutocommit(): boolean {
    return this.autocommit;
  }

  sqlOf(ref: { sql?: string; sqlId?: number }): string {
    if (ref.sql !== undefined) return ref.sql;
    const sql = this.sqls.get(ref.sqlId ?? -1);
    if (sql === undefined) throw new ProtocolError(`SQL text ${ref.sqlId} not found`);
    return sql;
  }

  async execute(stmt: Stmt): Promise<ExecResult> {
    const [r] = await this.send([{ type: "execute", stmt: this.stmtJson(stmt) }]);
    return execResultOf(ok(r).result as ReceivedStmtResult);
  }

  async batch(batch: Batch): Promise<BatchOutcome> {
    const steps = batch.steps.map((s) => ({ condition: s.condition, stmt: this.stmtJson(s.stmt) }));
    const [r] = await this.send([{ type: "batch", batch: { steps } }]);
    const result = ok(r).result as {
      step_results: Array<ReceivedStmtResult | null>;
      step_errors: Array<{ message: string; code: string } | null>;
    };
    return {
      results: result.step_results.map((x) => (x ? execResultOf(x) : null)),
      errors: result.step_errors.map((e) => (e ? new HranaError(passedOn(e.code), e.message) : null)),
    };
  }

  async sequence(ref: { sql?: string; sqlId?: number }): Promise<void> {
    ok((await this.send([{ type: "sequence", sql: this.sqlOf(ref) }]))[0]);
  }

  describe(): DescribeResult {
    throw new HranaError(
      "DESCRIBE_ELSEWHERE",
      "describe is not served at a location whose primary is on another node: send it to the primary",
    );
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.baton !== null) void this.send([{ type: "close" }]).catch(() => undefined);
  }

  private stmtJson(stmt: Stmt): Record<string, unknown> {
    return {
      sql: this.sqlOf(stmt),
      args: stmt.args.map(encodeValue),
      named_args: stmt.namedArgs.map(([name, value]) => ({ name, value: encodeValue(value) })),
      want_rows: stmt.wantRows,
    };
  }

  /** Sends `requests` (and asks whether the stream is back in autocommit) on the remote stream. */
  private async send(requests: Array<Record<string, unknown>>): Promise<Result[]> {
    const db = this.access.database;
    const base = await this.peers.urlOf(db.primary_location);
    if (!base) throw notSent(db.primary_location, "no node holds it");
    const at = `${encodeURIComponent(db.name)}@${encodeURIComponent(this.location)}`;
    let res: Response;
    try {
      res = await fetch(`${base}/db/${encodeURIComponent(db.org_slug)}/${at}/v3/pipeline`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${this.access.primaryElsewhere?.token ?? ""}`,
          "content-type": "application/json",
          // Names this node, so the primary's node serves the request itself rather than send it
          // back to the node holding the location (see forward/forwarder.ts).
          [FORWARDED_BY]: this.peers.nodeId,
        },
        body: JSON.stringify({ baton: this.baton, requests: [...requests, { type: "get_autocommit" }] }),
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      });
    } catch (e) {
      this.closed = true;
      throw forwardFailure(db.primary_location, e);
    }
    if (res.headers.get(REPLICA_BEHIND) === "1") this.onBehind?.();
    const body = (await res.json().catch(() => ({}))) as {
      baton?: string | null;
      results?: Array<{
        type: string;
        response?: Record<string, unknown>;
        error?: { message: string; code: string };
      }>;
      message?: string;
      code?: string;
    };
    if (!res.ok || !Array.isArray(body.results)) {
      this.closed = true;
      throw new HranaError(
        typeof body.code === "string" ? passedOn(body.code) : "PRIMARY_FAILED",
        body.message ?? `the primary's node answered ${res.status}`,
      );
    }
    this.baton = body.baton ?? null;
    if (this.baton === null) this.closed = true;
    const results = body.results.map(
      (r): Result =>
        r.type === "ok"
          ? { type: "ok", response: r.response ?? {} }
          : {
              type: "error",
              error: new HranaError(
                typeof r.error?.code === "string" ? passedOn(r.error.code) : "UNKNOWN",
                r.error?.message ?? "failed",
              ),
            },
    );
    const last = results.pop();
    if (last?.type === "ok") this.autocommit = last.response.is_autocommit !== false;
    return results;
  }
}

function ok(r: Result | undefined): Record<string, unknown> {
  if (!r) throw new HranaError("PRIMARY_FAILED", "the primary's node sent no result");
  if (r.type === "error") throw r.error;
  return r.response;
}

function notSent(location: string, why: string): HranaError {
  return new HranaError(
    "PRIMARY_UNREACHABLE",
    `the node holding this database's primary (location ${location}) can't be reached: ${why}; nothing was written`,
  );
}

/** Failures of a connection that was never made: the request wasn't sent, so nothing was written. */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * A forwarded request that got no answer. Refused before the connection was made, it was never
 * sent (`PRIMARY_UNREACHABLE`: nothing written); otherwise (a timeout, a connection cut) it may
 * have run on the primary, and the answer says the outcome is unknown (`PRIMARY_FAILED`).
 */
export function forwardFailure(location: string, e: unknown): HranaError {
  const cause = (e as { cause?: { code?: unknown; message?: string } }).cause;
  const why = cause?.message ?? (e as Error).message;
  if (typeof cause?.code === "string" && NOT_SENT.has(cause.code)) return notSent(location, why);
  return new HranaError(
    "PRIMARY_FAILED",
    `the node holding this database's primary (location ${location}) didn't answer: ${why}; the request may or may not have taken effect`,
  );
}

/** A statement result as Hrana's JSON carries it, back into the engine's shape. */
function execResultOf(j: ReceivedStmtResult): ExecResult {
  return {
    columns: j.cols,
    rows: j.rows.map((row) => row.map((v) => decodeValue(v) as SqlValue)),
    affectedRowCount: j.affected_row_count,
    lastInsertRowid: j.last_insert_rowid === null ? null : BigInt(j.last_insert_rowid),
    rowsRead: j.rows_read,
    rowsWritten: j.rows_written,
    durationMs: j.query_duration_ms,
  };
}
