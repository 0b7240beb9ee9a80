import type { SqlArgs, SqlValue } from "../../engine/connection.js";
import { HranaError, ProtocolError } from "./errors.js";
import { decodeValue } from "./values.js";

/** A statement as a request names it: by text or by stored id, with its arguments. */
export interface Stmt {
  sql?: string;
  sqlId?: number;
  args: SqlValue[];
  namedArgs: Array<[string, SqlValue]>;
  wantRows: boolean;
}

export type Condition =
  | { type: "ok"; step: number }
  | { type: "error"; step: number }
  | { type: "not"; cond: Condition }
  | { type: "and"; conds: Condition[] }
  | { type: "or"; conds: Condition[] }
  | { type: "is_autocommit" };

export interface Batch {
  steps: Array<{ condition: Condition | null; stmt: Stmt }>;
}

export type StreamRequest =
  | { type: "execute"; stmt: Stmt }
  | { type: "batch"; batch: Batch }
  | { type: "sequence"; sql?: string; sqlId?: number }
  | { type: "describe"; sql?: string; sqlId?: number }
  | { type: "store_sql"; sqlId: number; sql: string }
  | { type: "close_sql"; sqlId: number }
  | { type: "close" }
  | { type: "get_autocommit" };

type Obj = Record<string, unknown>;

function obj(v: unknown, what: string): Obj {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new ProtocolError(`${what} must be an object`);
  return v as Obj;
}

/** Optional fields: absent and explicit null mean the same (the Rust client sends nulls). */
function opt<T>(v: unknown, check: (x: unknown) => x is T, what: string): T | undefined {
  if (v === undefined || v === null) return undefined;
  if (!check(v)) throw new ProtocolError(`invalid ${what}`);
  return v;
}

const isString = (x: unknown): x is string => typeof x === "string";
const isInt = (x: unknown): x is number => typeof x === "number" && Number.isInteger(x);
const isBool = (x: unknown): x is boolean => typeof x === "boolean";

function sqlRef(o: Obj): { sql?: string; sqlId?: number } {
  const sql = opt(o.sql, isString, "sql");
  const sqlId = opt(o.sql_id, isInt, "sql_id");
  if ((sql === undefined) === (sqlId === undefined))
    throw new ProtocolError("exactly one of sql and sql_id is required");
  return sql !== undefined ? { sql } : { sqlId };
}

export function parseStmt(v: unknown): Stmt {
  const o = obj(v, "stmt");
  const args = o.args === undefined || o.args === null ? [] : o.args;
  const named = o.named_args === undefined || o.named_args === null ? [] : o.named_args;
  if (!Array.isArray(args) || !Array.isArray(named))
    throw new ProtocolError("args and named_args must be arrays");
  const ref = sqlRef(o);
  // One shape for every statement (both keys, one undefined): the code reading them stays monomorphic.
  return {
    sql: ref.sql,
    sqlId: ref.sqlId,
    args: args.map(decodeValue),
    namedArgs: named.map((a) => {
      const n = obj(a, "named argument");
      if (typeof n.name !== "string") throw new ProtocolError("a named argument needs a name");
      return [n.name, decodeValue(n.value)] as [string, SqlValue];
    }),
    wantRows: opt(o.want_rows, isBool, "want_rows") ?? true,
  };
}

function parseCondition(v: unknown): Condition {
  const o = obj(v, "condition");
  switch (o.type) {
    case "ok":
    case "error": {
      if (!isInt(o.step) || o.step < 0) throw new ProtocolError("a condition needs a step number");
      return { type: o.type, step: o.step };
    }
    case "not":
      return { type: "not", cond: parseCondition(o.cond) };
    case "and":
    case "or":
      if (!Array.isArray(o.conds)) throw new ProtocolError(`an ${o.type} condition needs conds`);
      return { type: o.type, conds: o.conds.map(parseCondition) };
    case "is_autocommit":
      return { type: "is_autocommit" };
    default:
      throw new ProtocolError(`unknown condition type: ${String(o.type)}`);
  }
}

export function parseBatch(v: unknown): Batch {
  return { steps: batchSteps(v).map(parseStep) };
}

/** A batch's raw steps, checked to be an array. */
export function batchSteps(v: unknown): unknown[] {
  const o = obj(v, "batch");
  if (!Array.isArray(o.steps)) throw new ProtocolError("a batch needs steps");
  return o.steps;
}

/** Step `i` of a batch. */
export function parseStep(s: unknown, i: number): Batch["steps"][number] {
  const step = obj(s, "batch step");
  const condition =
    step.condition === undefined || step.condition === null ? null : parseCondition(step.condition);
  if (condition && !conditionRefersBefore(condition, i)) {
    throw new ProtocolError(`step ${i} has a condition on a step that does not come before it`);
  }
  return { condition, stmt: parseStmt(step.stmt) };
}

function conditionRefersBefore(c: Condition, step: number): boolean {
  switch (c.type) {
    case "ok":
    case "error":
      return c.step < step;
    case "not":
      return conditionRefersBefore(c.cond, step);
    case "and":
    case "or":
      return c.conds.every((x) => conditionRefersBefore(x, step));
    default:
      return true;
  }
}

/** Parses one stream request; `version` 3 adds get_autocommit (and is_autocommit conditions). */
export function parseStreamRequest(v: unknown): StreamRequest {
  const o = obj(v, "request");
  switch (o.type) {
    case "execute":
      return { type: "execute", stmt: parseStmt(o.stmt) };
    case "batch":
      return { type: "batch", batch: parseBatch(o.batch) };
    case "sequence":
      return { type: "sequence", ...sqlRef(o) };
    case "describe":
      return { type: "describe", ...sqlRef(o) };
    case "store_sql": {
      if (!isInt(o.sql_id) || typeof o.sql !== "string")
        throw new ProtocolError("store_sql needs sql_id and sql");
      return { type: "store_sql", sqlId: o.sql_id, sql: o.sql };
    }
    case "close_sql":
      if (!isInt(o.sql_id)) throw new ProtocolError("close_sql needs sql_id");
      return { type: "close_sql", sqlId: o.sql_id };
    case "close":
      return { type: "close" };
    case "get_autocommit":
      return { type: "get_autocommit" };
    default:
      throw new ProtocolError(`unknown request type: ${String(o.type)}`);
  }
}

/** A statement's arguments as the engine takes them; both kinds at once is refused, as sqld does. */
export function argsOf(stmt: Stmt): SqlArgs {
  if (stmt.args.length > 0 && stmt.namedArgs.length > 0) {
    throw new HranaError(
      "ARGS_BOTH_POSITIONAL_AND_NAMED",
      "a statement cannot have both positional and named arguments",
    );
  }
  if (stmt.namedArgs.length === 0) return stmt.args;
  const named: Record<string, SqlValue> = {};
  for (const [name, value] of stmt.namedArgs) named[name] = value;
  return named;
}
