import { type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { ShoalCode } from "../dataplane/hrana/error-codes.js";
import { httpErrorOf } from "../dataplane/http-errors.js";
import { errorBody, sendError } from "../dataplane/http-io.js";
import type { Logger } from "../lib/logger.js";
import type { Quarantined } from "./quarantine.js";

/** What a refusal of the shards' own says. */
export interface ShardRefusal {
  status: number;
  code: ShoalCode;
  message: string;
  retryAfterS: number;
}

/** The answer for a database in quarantine (see quarantine.ts). */
export function quarantined(q: Quarantined, now = Date.now()): ShardRefusal {
  const retryAfterS = Math.max(1, Math.ceil((q.until - now) / 1000));
  return {
    status: 503,
    code: "DATABASE_QUARANTINED",
    message:
      `this database is refused until ${new Date(q.until).toISOString()}: its statements were running ` +
      `when the server process serving it ended abnormally ${q.crashes} times in a few minutes ` +
      "(a value the database driver can't read, such as TEXT that isn't UTF-8, ends that process); " +
      "other databases are not affected. Ask the operator, whose log names the database",
    retryAfterS,
  };
}

/** The answer for a connection whose shard didn't come back in time. */
export function shardUnavailable(index: number, waitedMs: number): ShardRefusal {
  return {
    status: 503,
    code: "SHARD_UNAVAILABLE",
    message: `the server process serving this database (shard ${index}) is restarting and did not answer within ${Math.round(waitedMs / 1000)} s; retry in a moment`,
    retryAfterS: 1,
  };
}

/**
 * The answer for a request sent on to the shard serving its database (sql-hop.ts) when that shard
 * ended before answering: it may have run, so a client must look before retrying a write.
 */
export function shardFailed(index: number): ShardRefusal {
  return {
    status: 502,
    code: "SHARD_FAILED",
    message: `the server process serving this database (shard ${index}) ended before it answered: the request may or may not have taken effect; look before retrying a write (the process is started again at once)`,
    retryAfterS: 1,
  };
}

/** The answer for a request that couldn't be sent on because its shard was going away: nothing ran. */
export function shardGone(index: number): ShardRefusal {
  return {
    status: 503,
    code: "SHARD_UNAVAILABLE",
    message: `the server process serving this database (shard ${index}) stopped before the request reached it: nothing was run; retry in a moment`,
    retryAfterS: 1,
  };
}

export function refuseHttp(res: ServerResponse, r: ShardRefusal): void {
  res.setHeader("retry-after", String(r.retryAfterS));
  sendError(res, r.status, r.code, r.message);
}

/** Answers on a raw connection (a WebSocket upgrade, or a connection not yet parsed) and closes it. */
export function refuseRaw(socket: Duplex, r: ShardRefusal): void {
  endRaw(socket, r.status, errorBody(r.code, r.message), `Retry-After: ${r.retryAfterS}\r\n`);
}

/** Answers a WebSocket upgrade that failed with `e` as the data plane answers any failed request. */
export function failUpgrade(socket: Duplex, e: unknown, requestId: string, log: Logger): void {
  const answer = httpErrorOf(e, requestId);
  if (answer.internal) log.child({ requestId }).error({ err: e }, "a WebSocket upgrade failed");
  endRaw(socket, answer.status, errorBody(answer.code, answer.message));
}

function endRaw(socket: Duplex, status: number, body: string, headers = ""): void {
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n${headers}Connection: close\r\n\r\n${body}`,
  );
}
