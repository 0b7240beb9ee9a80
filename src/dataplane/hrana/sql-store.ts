import { HranaError, ProtocolError } from "./errors.js";
import type { Stmt, StreamRequest } from "./requests.js";

export interface SqlStoreLimits {
  maxTexts: number;
  /** Longest text in bytes; 0 = no limit. */
  maxBytes: number;
}

/** sqld's limits: 50 texts of at most 5 kB per HTTP stream; 150 of any size per WebSocket connection. */
export const HTTP_SQL_LIMITS: SqlStoreLimits = { maxTexts: 50, maxBytes: 5000 };
export const WS_SQL_LIMITS: SqlStoreLimits = { maxTexts: 150, maxBytes: 0 };

/**
 * SQL texts a client stored to refer to by id (`store_sql`). Over HTTP each stream has its own;
 * over WebSocket they belong to the connection and every stream on it shares them.
 */
export class SqlStore {
  private readonly texts = new Map<number, string>();

  constructor(private readonly limits: SqlStoreLimits) {}

  get(id: number): string | undefined {
    return this.texts.get(id);
  }

  store(id: number, sql: string): void {
    if (this.texts.has(id)) throw new ProtocolError(`SQL text ${id} already exists`);
    if (this.texts.size >= this.limits.maxTexts) {
      throw new HranaError(
        "SQL_STORE_TOO_MANY",
        `The server already stores ${this.limits.maxTexts} SQL texts, it cannot store more`,
      );
    }
    const bytes = Buffer.byteLength(sql);
    if (this.limits.maxBytes > 0 && bytes > this.limits.maxBytes) {
      throw new HranaError(
        "SQL_STORE_TOO_LARGE",
        `The statement is too large to be stored: ${bytes}/${this.limits.maxBytes} bytes`,
      );
    }
    this.texts.set(id, sql);
  }

  /** Forgetting an id that isn't stored is fine. */
  close(id: number): void {
    this.texts.delete(id);
  }
}

/** A request with every stored SQL text it names put in place: a later close_sql must not change what it runs. */
export function inlineStoredSql(sqls: SqlStore, req: StreamRequest): StreamRequest {
  const text = (ref: { sql?: string; sqlId?: number }) => {
    if (ref.sqlId === undefined) return ref.sql;
    const sql = sqls.get(ref.sqlId);
    if (sql === undefined) throw new ProtocolError(`SQL text ${ref.sqlId} is not stored`);
    return sql;
  };
  const stmt = (s: Stmt): Stmt => ({ ...s, sql: text(s), sqlId: undefined });
  switch (req.type) {
    case "execute":
      return { ...req, stmt: stmt(req.stmt) };
    case "batch":
      return { ...req, batch: { steps: req.batch.steps.map((st) => ({ ...st, stmt: stmt(st.stmt) })) } };
    case "sequence":
    case "describe":
      return { type: req.type, sql: text(req) };
    default:
      return req;
  }
}
