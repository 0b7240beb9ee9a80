import type { DataAccess } from "../../domain/data-access/open.js";
import type { ExecResult, Prepared, RowBudget } from "../../engine/connection.js";
import type { BatchOutcome } from "./batch-steps.js";
import type { Batch, Stmt } from "./requests.js";
import type { SqlStore } from "./sql-store.js";

export interface DescribeResult {
  params: Array<{ name: string | null }>;
  cols: Array<{ name: string; decltype: string | null }>;
  is_explain: boolean;
  is_readonly: boolean;
}

/** What `describe` answers about a prepared statement. */
export function describePrepared(p: Prepared): DescribeResult {
  return {
    params: p.params.map((name) => ({ name })),
    cols: p.columns.map((c) => ({ name: c.name, decltype: c.decltype })),
    is_explain: p.info.isExplain,
    is_readonly: p.readonly,
  };
}

/** What a transport needs from a stream, wherever its statements run. */
export interface SqlStream {
  access: DataAccess;
  readonly sqls: SqlStore;
  readonly isClosed: boolean;
  /** Runs one statement; its rows count against `budget`, the response's. */
  execute(stmt: Stmt, budget?: RowBudget): ExecResult | Promise<ExecResult>;
  batch(batch: Batch, budget?: RowBudget): Promise<BatchOutcome>;
  sequence(ref: { sql?: string; sqlId?: number }): Promise<void>;
  describe(ref: { sql?: string; sqlId?: number }): DescribeResult;
  isAutocommit(): boolean;
  close(): void;
}
