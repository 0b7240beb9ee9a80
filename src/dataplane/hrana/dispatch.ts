import type { RowBudget } from "../../engine/connection.js";
import { CLOSED } from "./answer-text.js";
import { toHranaError } from "./errors.js";
import type { StreamRequest } from "./requests.js";
import { batchResultJson, stmtResultJson } from "./results.js";
import type { SqlStream } from "./stream.js";

/** What a request's answer costs besides its rows (counts, column names, the frame). */
const ANSWER_BYTES = 256;

/** A request's response body: at once when the request ran on the event loop, else once it has. */
export type Dispatched = Record<string, unknown> | Promise<Record<string, unknown>>;

/**
 * Runs one stream request and builds its response body, counting it against the response's
 * `budget`. Failures throw (or reject, for a request that waits): a HranaError is that request's
 * error result; a ProtocolError fails the transport request. A request that ran at once answers
 * at once, so a pipeline's `execute` and `close` run in the same turn of the event loop: waiting a
 * microtask between them let other pipelines' statements in while this one still held its
 * connection, so they opened others, and every write then emptied the other connections' page
 * caches (SQLite drops a connection's cache when another one wrote): three reads from disk per insert.
 */
export function dispatch(stream: SqlStream, req: StreamRequest, budget?: RowBudget): Dispatched {
  try {
    budget?.take(ANSWER_BYTES);
  } catch (e) {
    throw toHranaError(e);
  }
  switch (req.type) {
    case "execute": {
      const r = stream.execute(req.stmt, budget);
      if (r instanceof Promise) return r.then((done) => ({ type: "execute", result: stmtResultJson(done) }));
      return { type: "execute", result: stmtResultJson(r) };
    }
    case "batch":
      return stream.batch(req.batch, budget).then((b) => ({ type: "batch", result: batchResultJson(b) }));
    case "sequence":
      return stream.sequence(req).then(() => ({ type: "sequence" }));
    case "describe":
      return { type: "describe", result: stream.describe(req) };
    case "store_sql":
      stream.sqls.store(req.sqlId, req.sql);
      return { type: "store_sql" };
    case "close_sql":
      stream.sqls.close(req.sqlId);
      return { type: "close_sql" };
    case "close":
      stream.close();
      return CLOSED;
    case "get_autocommit":
      return { type: "get_autocommit", is_autocommit: stream.isAutocommit() };
  }
}
