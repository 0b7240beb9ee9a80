export type DialectKind = "sqlite" | "postgres";

/** What differs between the two store dialects, kept to the smallest possible surface. */
export interface StoreDialect {
  kind: DialectKind;
  /** True when `err` is the driver's unique-constraint (or primary-key) violation. */
  isUniqueViolation(err: unknown): boolean;
  /** True when the transaction failed for a reason a retry can cure (deadlock, serialization). */
  isTransient(err: unknown): boolean;
  /** True when the connection to the store failed or went silent (see isConnectionLoss). */
  lostConnection(err: unknown): boolean;
}

export const sqliteDialect: StoreDialect = {
  kind: "sqlite",
  isUniqueViolation(err) {
    const code = (err as { code?: unknown } | null)?.code;
    return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
  },
  // One writer at a time, waiting on the busy timeout: nothing to retry.
  isTransient: () => false,
  // A file in this process: there is no connection to lose.
  lostConnection: () => false,
};

export const postgresDialect: StoreDialect = {
  kind: "postgres",
  isUniqueViolation(err) {
    return (err as { code?: unknown } | null)?.code === "23505";
  },
  isTransient(err) {
    const code = (err as { code?: unknown } | null)?.code;
    return code === "40P01" || code === "40001";
  },
  lostConnection: isConnectionLoss,
};

/** Socket errors: the server is down, refuses, or the network between is cut. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** What pg says when a connection ends, can't be made in time, or a query went unanswered. */
const LOST =
  /^(Connection terminated|Query read timeout|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * True when a PostgreSQL query failed because the connection did, not the statement: a socket
 * error, pg's own messages for a closed or silent connection, or SQLSTATE class 08 (connection
 * exception) and 57P01-57P03 (the server shutting down or starting).
 */
export function isConnectionLoss(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : "";
  if (SOCKET_CODES.has(code) || code.startsWith("08") || /^57P0[123]$/.test(code)) return true;
  return typeof e?.message === "string" && LOST.test(e.message);
}
