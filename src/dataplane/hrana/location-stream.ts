import { type ReplicaPort, ReplicaUnavailableError } from "../../domain/core/ports.js";
import type { DataAccess } from "../../domain/data-access/open.js";
import { bindArguments, type ExecResult, type RowBudget, type SqlValue } from "../../engine/connection.js";
import { rowBytes } from "../../engine/execute.js";
import type { HostedDatabases } from "../../engine/hosted-databases.js";
import { splitStatements } from "../../engine/sql-lexer.js";
import { statementParameters } from "../../engine/sql-params.js";
import type { UsageRecorder } from "../../hosting/usage-tally.js";
import type { LaggingReplicas } from "../lagging-replicas.js";
import type { DataPlanePeers } from "../replica-notify.js";
import { forbiddenUse, orgBlocked } from "./authorize.js";
import { HranaError, toHranaError } from "./errors.js";
import { argsOf, type Batch, type Stmt } from "./requests.js";
import { withoutServerPaths } from "./server-paths.js";
import type { SqlStore } from "./sql-store.js";
import type { BatchOutcome, DescribeResult, SqlStream } from "./stream.js";
import type { StreamServices } from "./stream-services.js";

export interface LocationServices {
  replicas: ReplicaPort;
  hosted: HostedDatabases;
  meter: UsageRecorder;
  /** How long a read waits for the replica to have this stream's own write before reading at the primary. */
  readYourWritesMs: number;
  /** Which locations this node holds (absent: all of them). */
  holds?(location: string): boolean;
  /** The other nodes, for a primary held elsewhere. */
  peers?: DataPlanePeers;
  /** Replicas here that may lack a write sent on to another node: their reads go to the primary. */
  lagging?: Pick<LaggingReplicas, "mark" | "isLagging">;
  /** This node's write fence; a group isolated here answers no reads either (hosting/standbys.ts). */
  fence?: Pick<NonNullable<StreamServices["fence"]>, "refuseIfIsolated">;
}

/** The primary side of a location's stream: one on this node, or one forwarded to another. */
export type PrimaryStream = SqlStream & { sqlOf(ref: { sql?: string; sqlId?: number }): string };

/**
 * Where a location stream's parts run. `local`: reads on the replica here, the rest on the primary
 * here. `replica-elsewhere`: the primary is here but the location's replica on another node (its
 * requests were forwarded from there): everything runs on the primary, and a write's answer waits
 * for that replica. `primary-elsewhere`: the replica is here, the rest is forwarded to the primary's
 * node, which does that waiting.
 */
export type LocationMode = "local" | "replica-elsewhere" | "primary-elsewhere";

/**
 * A stream opened at a replica location. Plain reads run on the location's replica; writes,
 * batches and everything inside a transaction go to the primary through an ordinary stream. A
 * write's answer waits until the replica has it (read-your-writes); if the replica can't get there
 * in time, this stream's next read runs at the primary instead.
 */
export class LocationStream implements SqlStream {
  /** Replication index this stream's own writes reached; its reads must see at least this. */
  private mustSee = 0;

  constructor(
    readonly location: string,
    private readonly primary: PrimaryStream,
    private readonly services: LocationServices,
    private readonly mode: LocationMode = "local",
  ) {}

  get access(): DataAccess {
    return this.primary.access;
  }

  set access(a: DataAccess) {
    this.primary.access = a;
  }

  get sqls(): SqlStore {
    return this.primary.sqls;
  }

  get isClosed(): boolean {
    return this.primary.isClosed;
  }

  /** A write of this stream was answered before this location's replica had it. */
  get replicaBehind(): boolean {
    return this.mustSee > 0;
  }

  execute(stmt: Stmt, budget?: RowBudget): ExecResult | Promise<ExecResult> {
    // A token limited to tables reads at the primary, where each statement is checked against
    // its rules (the replica's read port runs SQL unchecked).
    if (this.mode !== "replica-elsewhere" && this.primary.isAutocommit() && !this.access.rights) {
      const sql = this.primary.sqlOf(stmt);
      const statements = splitStatements(sql);
      // Anything but a single plain read (including a text the primary will refuse) goes there.
      if (statements.length === 1 && statements[0]!.kind === "read") {
        return this.readHere(statements[0]!.sql, sql, stmt, budget);
      }
    }
    return this.onPrimary(() => this.primary.execute(stmt, budget));
  }

  batch(batch: Batch, budget?: RowBudget): Promise<BatchOutcome> {
    return this.onPrimary(() => this.primary.batch(batch, budget));
  }

  sequence(ref: { sql?: string; sqlId?: number }): Promise<void> {
    return this.onPrimary(() => this.primary.sequence(ref));
  }

  describe(ref: { sql?: string; sqlId?: number }): DescribeResult {
    return this.primary.describe(ref);
  }

  isAutocommit(): boolean {
    return this.primary.isAutocommit();
  }

  close(): void {
    this.primary.close();
  }

  /**
   * Runs on the primary. When that ends a write (back in autocommit), the answer waits until this
   * location's replica has the write, like libSQL's embedded replicas do, so any later read here,
   * on any stream, sees it; should the replica be too slow, this stream's next read goes to the primary.
   */
  private async onPrimary<T>(run: () => T | Promise<T>): Promise<T> {
    // The primary's node answered once this location's replica had the write.
    if (this.mode === "primary-elsewhere") return run();
    try {
      return await run();
    } finally {
      if (this.primary.isAutocommit()) {
        const index = this.services.hosted.at(this.access.path).frameLog.position().index;
        if (index > this.mustSee) {
          this.mustSee = index;
          const db = this.access.database;
          if (
            await this.services.replicas.waitFor(db.id, this.location, index, this.services.readYourWritesMs)
          ) {
            this.mustSee = 0;
          }
        }
      }
    }
  }

  /** Runs a single plain read at this location; `statement` is the read itself, `sql` the text sent. */
  private async readHere(
    statement: string,
    sql: string,
    stmt: Stmt,
    budget: RowBudget | undefined,
  ): Promise<ExecResult> {
    const db = this.access.database;
    // A replica here of a primary this node holds follows it: isolated, it may hold what vanishes.
    this.services.fence?.refuseIfIsolated(db);
    if (db.block_reads === 1)
      throw new HranaError("BLOCKED", "Operation was blocked: reads are blocked on this database");
    if (db.org_blocked_reads === 1) throw orgBlocked("reads", db.org_slug);
    const refused = forbiddenUse(statement);
    if (refused) {
      throw new HranaError(
        "SQL_PARSE_ERROR",
        `SQL string could not be parsed: unsupported statement: ${refused}`,
      );
    }
    // A write sent on from here was answered before this replica had it: read where it is.
    if (this.services.lagging?.isLagging(db.id, this.location)) return this.primary.execute(stmt, budget);
    if (this.mustSee > 0) {
      const caughtUp = await this.services.replicas.waitFor(
        db.id,
        this.location,
        this.mustSee,
        this.services.readYourWritesMs,
      );
      // Too far behind: read at the primary rather than miss this stream's own write.
      if (!caughtUp) return this.primary.execute(stmt, budget);
      this.mustSee = 0;
    }
    let args: SqlValue[] | Record<string, SqlValue>;
    try {
      args = bindArguments({ params: statementParameters(sql) }, argsOf(stmt));
    } catch (e) {
      throw toHranaError(e, "prepare");
    }
    let read: Awaited<ReturnType<ReplicaPort["query"]>>;
    try {
      read = await this.services.replicas.query(db.id, this.location, sql, args, this.access.key);
    } catch (e) {
      // The lexer called it a read but SQLite disagrees (a PRAGMA that writes): let the primary run it.
      if ((e as { code?: string }).code === "REPLICA_READ_ONLY")
        return this.onPrimary(() => this.primary.execute(stmt, budget));
      // The replica can't answer (being rebuilt, opening without its primary): the primary can.
      if (e instanceof ReplicaUnavailableError) return this.primary.execute(stmt, budget);
      throw toHranaError(e, "prepare");
    }
    const rows = read.rows as SqlValue[][];
    try {
      // The replica answers whole; the limit still holds for what is sent on.
      if (budget) for (const row of rows) budget.take(rowBytes(row));
    } catch (e) {
      throw toHranaError(e);
    }
    const encrypted = db.encryption_cipher !== null;
    this.services.meter.record(
      { id: db.id, orgId: db.org_id, encrypted },
      sql,
      rows.length,
      0,
      read.durationMs,
    );
    return withoutServerPaths(statement, {
      columns: read.columns,
      rows: stmt.wantRows ? rows : [],
      affectedRowCount: 0,
      lastInsertRowid: null,
      rowsRead: rows.length,
      rowsWritten: 0,
      durationMs: read.durationMs,
    });
  }
}
