import type { RowBudget } from "../../engine/connection.js";
import { toHranaError } from "./errors.js";
import type { StreamRequest } from "./requests.js";
import { batchResultJson, stmtResultJson } from "./results.js";
import type { SqlStream } from "./stream.js";

/** What a request's answer costs besides its rows (counts, column names, the frame). */
const ANSWER_BYTES = 256;

/**
 * Runs one stream request and builds its response body, counting it against the response's
 * `budget`. Failures throw: a HranaError is that request's error result; a ProtocolError fails
 * the transport request.
 */
export async function dispatch(
  stream: SqlStream,
  req: StreamRequest,
  budget?: RowBudget,
): Promise<Record<string, unknown>> {
  try {
    budget?.take(ANSWER_BYTES);
  } catch (e) {
    throw toHranaError(e);
  }
  switch (req.type) {
    case "execute": {
      const r = stream.execute(req.stmt, budget);
      return { type: "execute", result: stmtResultJson(r instanceof Promise ? await r : r) };
    }
    case "batch":
      return { type: "batch", result: batchResultJson(await stream.batch(req.batch, budget)) };
    case "sequence":
      await stream.sequence(req);
      return { type: "sequence" };
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
      return { type: "close" };
    case "get_autocommit":
      return { type: "get_autocommit", is_autocommit: stream.isAutocommit() };
  }
}
