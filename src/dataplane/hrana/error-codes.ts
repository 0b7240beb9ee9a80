/**
 * Every error code the data plane itself sends, named once. Clients test against these strings
 * (`LibsqlError.code`), so a new one is added here, with what it means, and in
 * docs/operations/error-codes.md (a test checks both lists agree). `HranaError`, `ProtocolError`
 * and the transports' error functions take only these, so a misspelt code fails the typecheck.
 */
export const DATA_PLANE_CODES = {
  // One statement or request failed; the stream goes on.
  SQL_INPUT_ERROR: "SQLite refused to compile the SQL (syntax, unknown table or column)",
  SQL_PARSE_ERROR: "a statement Shoal does not run (file-level pragmas, server paths, ATTACH forms)",
  SQL_NO_STATEMENT: "the SQL text holds no statement",
  SQL_MANY_STATEMENTS: "`execute` was given more than one statement",
  ARGS_INVALID: "arguments do not match the statement's parameters",
  ARGS_BOTH_POSITIONAL_AND_NAMED: "a statement was given both positional and named arguments",
  STATEMENT_TIMEOUT: "the statement ran past SHOAL_STATEMENT_TIMEOUT_MS and was interrupted",
  STATEMENT_CANCELLED: "the statement was stopped because its stream closed while it ran",
  RESPONSE_TOO_LARGE: "the answer would pass SHOAL_MAX_RESPONSE_BYTES",
  CONNECTIONS_EXHAUSTED: "every database connection the server may open is in use",
  TRANSACTION_TIMEOUT: "the transaction held the write lock past its time limit and was rolled back",
  STREAMS_TOO_MANY: "a limit on open streams (per WebSocket or per database) was reached",
  SQL_STORE_TOO_MANY: "`store_sql` past the number of SQL texts a stream or connection keeps",
  SQL_STORE_TOO_LARGE: "`store_sql` of a text past the size kept",
  BLOCKED: "reads or writes are blocked on the database or its organization",
  DISK_RESERVE_REACHED:
    "the server's free disk space is below SHOAL_DISK_RESERVE_MB; writes that grow a database are refused",
  FORBIDDEN: "the token or the database's setup does not allow this statement",
  PRIMARY_NOT_LEASED: "this node no longer holds the lease of the database's primary; nothing was written",
  PRIMARY_UNREACHABLE: "the node holding the database's primary can't be reached; nothing was sent",
  PRIMARY_FAILED:
    "the node holding the database's primary failed or didn't answer in time; the request may have taken effect",
  WRITE_UNCONFIRMED:
    "the write committed at the primary, but no standby confirmed it and the store couldn't be told; a failover may discard it",
  PRIMARY_ISOLATED:
    "the primary here can reach neither a standby nor the store to drop it; it serves nothing until it can",
  DESCRIBE_ELSEWHERE: "`describe` at a replica location whose primary is on another node",
  UNKNOWN: "another node's failed result came without a code",
  // The whole request or connection failed.
  PROTOCOL_ERROR: "the request breaks the Hrana protocol (malformed JSON, a bad baton or id)",
  STREAM_EXPIRED: "the HTTP stream (interactive transaction) idled out and was rolled back",
  REVISION_UNKNOWN: "a pull named a server revision that is not one of this database",
  REVISION_GONE: "a pull named a server revision whose pages are no longer kept",
  GENERATION_GONE: "an embedded replica asked for a generation no longer kept",
  REQUEST_TOO_LARGE: "the request body is larger than the data plane reads",
  REQUEST_TIMEOUT: "the request body did not arrive within SHOAL_BODY_TIMEOUT_MS",
  NOT_FOUND: "no such data-plane route",
  URL_MISSING_TRAILING_SLASH: "a `/db/<org>/<database>` URL without its trailing slash",
  ERROR: "a refusal of the domain's that carries no code of its own",
  AUTH_FAILED: "a WebSocket `hello` refused without a code of its own",
  INTERNAL_ERROR: "a failure of the server's own; the message names the request id",
  // Between the nodes of one deployment (forwarding, replicas' pulls).
  DATABASE_NODE_UNREACHABLE: "the node holding the database can't be reached; nothing was sent",
  DATABASE_NODE_FAILED: "the node holding the database failed after receiving the request",
  LOCATION_UNHELD: "no node holds the database's location",
  DATABASE_ELSEWHERE: "a request forwarded once reached a node that does not hold the database either",
  NODE_ONLY: "a node-to-node route called without a node's token",
  BAD_REQUEST: "a node-to-node request without what it must carry",
  MISDIRECTED: "a replica notice for a location this node does not hold",
  METHOD_NOT_ALLOWED: "a replica's pull that is not a GET",
  NOT_A_PULL: "a path through the pull relay that is not a replica's pull",
  NOT_RELAYED: "no replica of this node pulls the database through the relay",
  PRIMARY_NOT_ANSWERING: "a relayed pull made no progress in time",
  // Between the processes of one node (src/shards).
  DATABASE_QUARANTINED:
    "the database's statements ended its server process more than once; refused for a while",
  SHARD_UNAVAILABLE: "the process serving the database is restarting and did not come back in time",
  SHARD_FAILED: "the process serving the database ended while it ran the request; it may have taken effect",
} as const satisfies Record<string, string>;

/** A code of Shoal's own. */
export type ShoalCode = keyof typeof DATA_PLANE_CODES;

/**
 * SQLite's primary result codes (`SQLITE_CONSTRAINT`, `SQLITE_BUSY`, ...) as sqld reports them,
 * and `SQLITE_UNKNOWN`: an open family that comes from the engine.
 */
export type SqliteCode = `SQLITE_${string}`;

declare const passed: unique symbol;
/**
 * A code decided elsewhere and passed on unchanged: the domain's typed errors (`AUTH_*`,
 * `DATABASE_NOT_FOUND`...) and another node's answers. Made only by `passedOn`, so a plain string
 * never passes for a code by accident.
 */
export type PassedCode = string & { readonly [passed]: true };

/** Every code that reaches a client of the data plane. */
export type HranaCode = ShoalCode | SqliteCode | PassedCode;

export function passedOn(code: string): PassedCode {
  return code as PassedCode;
}

export function isShoalCode(code: string): code is ShoalCode {
  return Object.hasOwn(DATA_PLANE_CODES, code);
}
