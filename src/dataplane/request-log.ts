import type { IncomingMessage, ServerResponse } from "node:http";
import type { WebSocket } from "ws";
import { loggablePath } from "../lib/loggable-path.js";
import type { Logger } from "../lib/logger.js";
import { REQUEST_ID_HEADER } from "../lib/request-id.js";
import type { ShoalMetrics } from "../metrics/metrics.js";
import { statementShape } from "../metrics/statement-kind.js";
import type { Stmt, StreamRequest } from "./hrana/requests.js";
import type { DataRoute } from "./routing.js";
import { isUploadRequest } from "./upload.js";

/** Statements logged per request at most; a request with more says how many there were. */
const MAX_LOGGED_STATEMENTS = 10;

/**
 * Where an HTTP request keeps the Hrana requests it runs, shaped only if its log line is written.
 * A property of its own rather than a WeakMap entry: that cost more than the rest of the logging.
 */
const NOTED = Symbol("shoal.statements");
type Noted = IncomingMessage & { [NOTED]?: readonly StreamRequest[] };

/** A request's statements as logged: the first few shapes, and how many there were in all. */
export interface StatementShapes {
  statements: string[];
  count: number;
}

function shapeOf(stmt: { sql?: string; sqlId?: number }): string {
  return stmt.sql !== undefined ? statementShape(stmt.sql) : `(stored SQL ${stmt.sqlId ?? "?"})`;
}

/** The shapes of the SQL a Hrana request runs: never its arguments. */
export function statementShapes(requests: readonly StreamRequest[]): StatementShapes {
  const out: string[] = [];
  let count = 0;
  const add = (stmt: Pick<Stmt, "sql" | "sqlId">) => {
    if (count++ < MAX_LOGGED_STATEMENTS) out.push(shapeOf(stmt));
  };
  for (const r of requests) {
    if (r.type === "execute") add(r.stmt);
    else if (r.type === "batch") for (const s of r.batch.steps) add(s.stmt);
    else if (r.type === "sequence" || r.type === "describe") add(r);
  }
  return { statements: out, count };
}

/** Records the statements a request runs, for its log line (shaped then, not on every request). */
export function noteStatements(req: IncomingMessage, requests: readonly StreamRequest[]): void {
  (req as Noted)[NOTED] = requests;
}

/**
 * A bounded name for what a data-plane request asked for, to label metrics by (the path names the
 * database, and stays out of labels).
 */
export function endpointOf(method: string, path: string): string {
  if (method === "OPTIONS") return "preflight";
  if (isUploadRequest(method, path)) return "upload";
  if (method === "POST") {
    if (path === "/v2/pipeline" || path === "/v3/pipeline") return "pipeline";
    if (path === "/v3/cursor") return "cursor";
    if (path === "/pull-updates") return "pull-updates";
  }
  if (method === "GET") {
    if (path === "/dump" || path === "/export" || path === "/info") return path.slice(1);
    if (/^\/export\/\d+$/.test(path)) return "sync-export";
    if (/^\/sync\/\d+\/\d+\/\d+$/.test(path)) return "sync-frames";
    if (path === "/v2" || path === "/v3" || path === "/health" || path === "/version") return "probe";
  }
  return "other";
}

/**
 * Once a data-plane HTTP request is answered (or its connection dropped): its metrics and one log
 * line with its request id, route, status, time and the shapes of its statements.
 */
export function observeRequest(
  req: IncomingMessage,
  res: ServerResponse,
  route: DataRoute,
  deps: { log: Logger; metrics: Pick<ShoalMetrics, "dataRequest"> },
): void {
  const started = performance.now();
  res.once("close", () => {
    const seconds = (performance.now() - started) / 1000;
    const method = req.method ?? "GET";
    const path = route.path.includes("//") ? route.path.replace(/\/{2,}/g, "/") : route.path;
    const endpoint = endpointOf(method, path);
    // A connection that dropped before the answer was sent is counted as status 499 (nginx's).
    const status = res.writableFinished ? res.statusCode : 499;
    deps.metrics.dataRequest("http", endpoint, String(status), seconds);
    // Replicas on this node pull after every commit, by database id: at info those pulls would
    // outnumber the clients' own requests.
    const level = "id" in route.locator ? "debug" : "info";
    if (!deps.log.isLevelEnabled(level)) return;
    const line: Record<string, unknown> = {
      requestId: res.getHeader(REQUEST_ID_HEADER),
      method,
      path: loggablePath((req.url ?? "/").split("?")[0]!),
      endpoint,
      status,
      ms: Math.round(seconds * 10_000) / 10,
    };
    const requests = (req as Noted)[NOTED];
    if (requests) {
      const shapes = statementShapes(requests);
      line.statements = shapes.statements;
      if (shapes.count > shapes.statements.length) line.statementCount = shapes.count;
    }
    deps.log[level](line, "data plane request");
  });
}

type Observed = { log: Logger; metrics: Pick<ShoalMetrics, "dataRequest" | "webSocket"> };

/** A Hrana WebSocket: counted while open, with a log line when it opens and when it closes. */
export function observeSocket(deps: Observed, req: IncomingMessage, ws: WebSocket): void {
  const opened = performance.now();
  const path = loggablePath((req.url ?? "/").split("?")[0]!);
  deps.metrics.webSocket(1);
  deps.log.info({ path, protocol: ws.protocol }, "websocket opened");
  ws.once("close", (code) => {
    deps.metrics.webSocket(-1);
    deps.log.info({ path, code, ms: Math.round(performance.now() - opened) }, "websocket closed");
  });
}

/**
 * A Hrana request over a WebSocket answered: its metrics, and a log line with its statements'
 * shapes (the socket's logger carries the request id of its upgrade).
 */
export function observeWsRequest(
  deps: Observed,
  req: StreamRequest,
  started: number,
  outcome: "ok" | "error",
): void {
  const seconds = (performance.now() - started) / 1000;
  deps.metrics.dataRequest("ws", req.type, outcome, seconds);
  if (!deps.log.isLevelEnabled("info")) return;
  const { statements, count } = statementShapes([req]);
  const line: Record<string, unknown> = {
    request: req.type,
    status: outcome,
    ms: Math.round(seconds * 10_000) / 10,
  };
  if (count > 0) line.statements = statements;
  if (count > statements.length) line.statementCount = count;
  deps.log.info(line, "data plane request");
}
