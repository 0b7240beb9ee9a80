import type { ErrorKind } from "../errors.js";

/**
 * The HTTP status of each error kind, shared by the management API's error mapper and the data
 * plane so one kind never means two statuses.
 */
export const STATUS_OF_KIND: Readonly<
  Record<ErrorKind, 400 | 401 | 402 | 403 | 404 | 409 | 413 | 421 | 422 | 429 | 502 | 503 | 507>
> = {
  invalid: 400,
  unauthenticated: 401,
  quota_exceeded: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  limit_exceeded: 429,
  unavailable: 503,
  misdirected: 421,
  bad_gateway: 502,
  too_large: 413,
  insufficient_storage: 507,
};
