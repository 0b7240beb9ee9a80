import { readdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isShoalCode, passedOn } from "../../src/dataplane/hrana/error-codes.js";
import { HranaError, ProtocolError, toHranaError } from "../../src/dataplane/hrana/errors.js";
import { StreamLimitError } from "../../src/dataplane/hrana/stream-limits.js";
import { httpErrorOf, NoRouteError } from "../../src/dataplane/http-errors.js";
import { BodyTimeoutError, BodyTooLargeError } from "../../src/dataplane/http-io.js";
import { wsErrorOf } from "../../src/dataplane/ws-errors.js";
import {
  ConnectionsExhaustedError,
  MissingFileError,
  ResponseTooLargeError,
  SchemaMovedError,
  SqlInputError,
  StatementCancelledError,
  StatementTimeoutError,
  WalRestartBusyError,
} from "../../src/engine/sqlite-errors.js";
import { LockTimeoutError } from "../../src/engine/write-lock.js";
import { AppError, type ErrorKind } from "../../src/errors.js";

/**
 * Every error the engine, the domain or the data plane can throw, and what each transport makes
 * of it. A new error class in those modules fails the first test until it is given a row here
 * (and so a deliberate answer), or listed in NEVER_ON_THE_WIRE with where it is translated.
 */
const ID = "req-1";
const INTERNAL = { status: 500, code: "INTERNAL_ERROR", message: `internal error (request ${ID})` };

/** What one error becomes: over HTTP, over WebSocket, and in a statement's result. */
interface Row {
  what: string;
  error: () => unknown;
  http: { status: number; code: string; close?: true };
  /** `respond`: a response_error with this code; `close`: the socket closes 1002 with the error's message. */
  ws: { respond: string } | "close" | "internal";
  /** The code of a statement's result error, or undefined where toHranaError throws it on. */
  result?: string;
}

let dir: string;
const sqlite: Record<string, Error> = {};

/** Runs `f` on a real libSQL database and returns what it threw. */
function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a failure");
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-errors-"));
  const db = new Database(path.join(dir, "a.db"));
  db.exec("CREATE TABLE t (v UNIQUE); INSERT INTO t VALUES (1)");
  sqlite.syntax = thrown(() => db.prepare("SELEC 1"));
  sqlite.constraint = thrown(() => db.exec("INSERT INTO t VALUES (1)"));
  db.close();
  const garbage = path.join(dir, "garbage.db");
  writeFileSync(garbage, Buffer.alloc(8192, 7));
  sqlite.notadb = thrown(() => new Database(garbage).prepare("SELECT * FROM sqlite_master").all());
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  quota_exceeded: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  misdirected: 421,
  unprocessable: 422,
  limit_exceeded: 429,
  bad_gateway: 502,
  unavailable: 503,
  insufficient_storage: 507,
};

const domainRows: Row[] = Object.entries(STATUS).flatMap(([kind, status]): Row[] => [
  {
    what: `a domain ${kind} error with a code`,
    error: () => new AppError(kind as ErrorKind, "no", "AUTH_JWT_INVALID"),
    http: { status, code: "AUTH_JWT_INVALID" },
    ws: { respond: "AUTH_JWT_INVALID" },
  },
  {
    what: `a domain ${kind} error without one`,
    error: () => new AppError(kind as ErrorKind, "no"),
    http: { status, code: "ERROR" },
    ws: { respond: "ERROR" },
  },
]);

const rows: Row[] = [
  ...domainRows,
  {
    what: "a Hrana error",
    error: () => new HranaError("TRANSACTION_TIMEOUT", "Transaction timed out"),
    http: { status: 400, code: "TRANSACTION_TIMEOUT" },
    ws: { respond: "TRANSACTION_TIMEOUT" },
    result: "TRANSACTION_TIMEOUT",
  },
  {
    what: "another node's Hrana error, passed on",
    error: () => new HranaError(passedOn("AUTH_JWT_EXPIRED"), "expired"),
    http: { status: 400, code: "AUTH_JWT_EXPIRED" },
    ws: { respond: "AUTH_JWT_EXPIRED" },
    result: "AUTH_JWT_EXPIRED",
  },
  {
    what: "a stream limit",
    error: () => new StreamLimitError("too many"),
    http: { status: 429, code: "STREAMS_TOO_MANY" },
    ws: { respond: "STREAMS_TOO_MANY" },
    result: "STREAMS_TOO_MANY",
  },
  {
    what: "a protocol error",
    error: () => new ProtocolError("invalid baton"),
    http: { status: 400, code: "PROTOCOL_ERROR" },
    ws: "close",
  },
  {
    what: "an expired stream",
    error: () => new ProtocolError("The stream has expired due to inactivity", "STREAM_EXPIRED"),
    http: { status: 400, code: "STREAM_EXPIRED" },
    ws: "close",
  },
  { what: "malformed JSON", error: () => new SyntaxError("Unexpected token"), http: INTERNAL, ws: "close" },
  {
    what: "a body past the size read",
    error: () => new BodyTooLargeError(),
    http: { status: 413, code: "REQUEST_TOO_LARGE", close: true },
    ws: "internal",
  },
  {
    what: "a body that didn't arrive in time",
    error: () => new BodyTimeoutError(30_000),
    http: { status: 408, code: "REQUEST_TIMEOUT", close: true },
    ws: "internal",
  },
  {
    what: "a URL that names no route",
    error: () => new NoRouteError("NOT_FOUND", "no such data-plane route"),
    http: { status: 404, code: "NOT_FOUND" },
    ws: "internal",
  },
  {
    what: "a URL without its trailing slash",
    error: () => new NoRouteError("URL_MISSING_TRAILING_SLASH", "end it with a slash"),
    http: { status: 404, code: "URL_MISSING_TRAILING_SLASH" },
    ws: "internal",
  },
  ...(
    [
      ["SQL the engine refuses", () => new SqlInputError("ARGS_INVALID", "x"), 400, "ARGS_INVALID"],
      ["a statement timeout", () => new StatementTimeoutError(5000, true), 400, "STATEMENT_TIMEOUT"],
      ["a too large answer", () => new ResponseTooLargeError("big"), 400, "RESPONSE_TOO_LARGE"],
      ["a cancelled statement", () => new StatementCancelledError(), 400, "STATEMENT_CANCELLED"],
      ["a checked read whose schema moved", () => new SchemaMovedError(), 400, "SQLITE_SCHEMA"],
      ["every connection busy", () => new ConnectionsExhaustedError(8), 503, "CONNECTIONS_EXHAUSTED"],
      ["a write lock wait past the limit", () => new LockTimeoutError(5000), 400, "SQLITE_BUSY"],
      ["a first connection another process holds off", () => new WalRestartBusyError(), 400, "SQLITE_BUSY"],
    ] as const
  ).map(
    ([what, error, status, code]): Row => ({
      what,
      error,
      http: { status, code },
      ws: { respond: code },
      result: code,
    }),
  ),
  {
    what: "a file that is not a database",
    error: () => sqlite.notadb,
    http: { status: 409, code: "SQLITE_NOTADB" },
    ws: { respond: "SQLITE_NOTADB" },
    result: "SQLITE_NOTADB",
  },
  // SQLite's own failures outside a statement are the server's (a statement's are its result).
  {
    what: "a constraint",
    error: () => sqlite.constraint,
    http: INTERNAL,
    ws: "internal",
    result: "SQLITE_CONSTRAINT",
  },
  {
    what: "a syntax error",
    error: () => sqlite.syntax,
    http: INTERNAL,
    ws: "internal",
    result: "SQLITE_UNKNOWN",
  },
  {
    what: "a missing file",
    error: () => new MissingFileError(),
    http: INTERNAL,
    ws: "internal",
    result: "SQLITE_CANTOPEN",
  },
  { what: "a bug", error: () => new TypeError("x is undefined"), http: INTERNAL, ws: "internal" },
];

/**
 * Error classes that never reach a transport: each is translated where it is thrown. The
 * domain's AppError subclasses are covered by kind (every kind has rows above).
 */
const NEVER_ON_THE_WIRE: Record<string, string> = {
  SyncPointGone: "pull/pull-updates.ts answers REVISION_GONE",
  ProtobufError: "pull/messages.ts answers PROTOCOL_ERROR",
  RoaringFormatError: "pull/messages.ts answers PROTOCOL_ERROR",
  ReplicaUnavailableError: "location-stream.ts sends the statement to the primary",
  DumpError: "hosting/content-builder.ts makes it a domain error",
  DumpTooLargeError: "domain/databases/dumps.ts makes it a domain error",
  DatabaseFileError: "hosting/ makes it a domain error",
  UploadRejectedError: "hosting/upload-installer.ts makes it a domain error",
  NodeStartError: "thrown while the process starts",
  StartError: "thrown while the process starts",
  InjectedFault: "thrown only by failpoints in the steps after a commit, which log it and never throw",
  JwksUnusableError:
    "domain/data-access/jwks.ts makes it a domain error; data-access/provider-tokens.ts a 401 that names no URL",
};

describe("every error reaches the wire through one mapping per transport", () => {
  it("has an answer for every error class the engine, domain, library and data plane export", async () => {
    const src = path.resolve(import.meta.dirname, "../../src");
    const files = ["engine", "dataplane", "domain", "lib"]
      .flatMap((d) =>
        readdirSync(path.join(src, d), { recursive: true, encoding: "utf8" }).map((f) => path.join(d, f)),
      )
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
      .concat("errors.ts");
    const modules = await Promise.all(files.map(async (f) => [f, await import(path.join(src, f))] as const));
    const tabled = new Set(rows.map((r) => (r.error() as object).constructor));
    const missing: string[] = [];
    for (const [file, exports] of modules) {
      for (const [name, value] of Object.entries(exports as Record<string, unknown>)) {
        if (typeof value !== "function" || !(value.prototype instanceof Error)) continue;
        if (value.prototype instanceof AppError || value === AppError) continue;
        if (!tabled.has(value) && !(name in NEVER_ON_THE_WIRE)) missing.push(`${name} (${file})`);
      }
    }
    expect(missing, "error classes with no row in this table").toEqual([]);
  });

  it.each(rows)("over HTTP: $what", (row) => {
    const e = row.error();
    const a = httpErrorOf(e, ID);
    expect({ status: a.status, code: a.code }).toEqual({ status: row.http.status, code: row.http.code });
    expect(a.closeConnection).toBe(row.http.close === true);
    expect(a.internal).toBe(row.http.code === "INTERNAL_ERROR");
    // The client hears what went wrong, or for a failure of the server's only the request id.
    if (a.internal) expect(a.message).toBe(INTERNAL.message);
    else expect(a.message).toContain((e as Error).message);
  });

  it.each(rows)("over WebSocket: $what", (row) => {
    const e = row.error() as Error;
    const a = wsErrorOf(e, ID);
    expect(a.close.code).toBe(1002);
    if (typeof row.ws === "object") {
      expect(a.error?.code).toBe(row.ws.respond);
      expect(a.internal).toBe(false);
    } else {
      expect(a.error).toBeUndefined();
      expect(a.internal).toBe(row.ws === "internal");
      expect(a.close.reason).toBe(row.ws === "internal" ? INTERNAL.message : e.message.slice(0, 120));
    }
    // A hello fails only with a hello_error and 1008, whatever the cause.
    const hello = wsErrorOf(e, ID, "hello");
    expect(hello.close.code).toBe(1008);
    expect(hello.error?.code).toBe(e instanceof AppError ? (e.code ?? "AUTH_FAILED") : "INTERNAL_ERROR");
  });

  it.each(rows)("in a statement's result: $what", (row) => {
    const e = row.error();
    if (row.result === undefined) expect(() => toHranaError(e)).toThrow();
    else expect(toHranaError(e).code).toBe(row.result);
  });

  it("sends only codes of the closed set, SQLite's family, or codes passed on from the domain", () => {
    for (const row of rows) {
      const e = row.error();
      const passed = e instanceof AppError || (e instanceof HranaError && row.what.includes("passed on"));
      for (const code of [httpErrorOf(e, ID).code, wsErrorOf(e, ID).error?.code]) {
        if (code === undefined || passed) continue;
        expect(isShoalCode(code) || code.startsWith("SQLITE_"), `${row.what}: ${code}`).toBe(true);
      }
    }
  });
});
