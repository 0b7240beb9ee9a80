/**
 * Typed application errors. They carry a kind and a user-facing message, never an HTTP status:
 * `api/error-handler.ts` is the one place that turns a kind into a status code and body.
 */
export type ErrorKind =
  | "invalid"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "limit_exceeded"
  | "quota_exceeded"
  | "unprocessable"
  | "unavailable"
  | "misdirected"
  | "bad_gateway"
  | "too_large"
  | "insufficient_storage";

export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** Optional machine-readable code, sent beside the message (Turso does this for a few errors). */
    readonly code?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidError extends AppError {
  constructor(message: string, code?: string) {
    super("invalid", message, code);
  }
}

export class UnauthenticatedError extends AppError {
  constructor(message: string, code?: string) {
    super("unauthenticated", message, code);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string, code?: string) {
    super("forbidden", message, code);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string, code?: string) {
    super("not_found", message, code);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, code?: string) {
    super("conflict", message, code);
  }
}

export class LimitExceededError extends AppError {
  constructor(message: string, code?: string) {
    super("limit_exceeded", message, code);
  }
}

/** The organization's plan doesn't allow more (databases, groups, locations). */
export class QuotaExceededError extends AppError {
  constructor(message: string, code = "quota_exceeded") {
    super("quota_exceeded", message, code);
  }
}

/** A well-formed request that can't be processed as sent (an Idempotency-Key reused for another request). */
export class UnprocessableError extends AppError {
  constructor(message: string, code?: string) {
    super("unprocessable", message, code);
  }
}

export class UnavailableError extends AppError {
  constructor(message: string, code?: string) {
    super("unavailable", message, code);
  }
}

/**
 * The request must be served by another node: the database files it would create or remove are
 * kept by the node holding their location (several processes sharing one store).
 */
export class MisdirectedError extends AppError {
  constructor(
    message: string,
    code = "misdirected",
    /** The node that can serve the request, when known: the API forwards the request there. */
    readonly holder?: { id: string; url: string },
  ) {
    super("misdirected", message, code);
  }
}

/**
 * Another node was asked to serve the request and failed after it was sent: whether it took
 * effect there is unknown, so the caller should look before retrying.
 */
export class BadGatewayError extends AppError {
  constructor(message: string, code = "bad_gateway") {
    super("bad_gateway", message, code);
  }
}

/** A request body past the size the service reads. */
export class PayloadTooLargeError extends AppError {
  constructor(message: string, code = "request_too_large") {
    super("too_large", message, code);
  }
}

/**
 * Raised by the store when a unique constraint rejects a write. Domain verbs translate it into the
 * conflict message the API promises; the constraint name says which rule fired.
 */
export class UniqueViolationError extends ConflictError {
  constructor(readonly constraint: string) {
    super(`unique constraint violated: ${constraint}`);
  }
}

/**
 * The process can't start: its message is one line for the operator, saying what to do; the
 * command line prints it without a stack trace. `exitCode` 2 means the settings or the data folder
 * must change first; 1 that the trouble is outside (a port taken, a server down) and may pass.
 */
export class StartError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The node has no room for what was asked (its disk reserve is reached, or its disk is full). */
export class InsufficientStorageError extends AppError {
  constructor(message: string, code = "DISK_RESERVE_REACHED") {
    super("insufficient_storage", message, code);
  }
}
