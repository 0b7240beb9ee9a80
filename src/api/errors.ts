import {
  BadGatewayError,
  InvalidError,
  LimitExceededError,
  PayloadTooLargeError,
  UnauthenticatedError,
  UnavailableError,
} from "../errors.js";

/**
 * Every error message the management API itself (before a verb runs, or forwarding to another node) answers with. The texts are the API's contract (Turso's wording
 * where Turso has one; clients and tests match on them): change one only on purpose.
 */
export const apiErrors = {
  queryNotJson: (name: string) => new InvalidError(`the query parameter ${name} must be JSON`),
  missingToken: () => new UnauthenticatedError("missing Authorization header with a Bearer API token"),
  malformedAuthorization: () =>
    new UnauthenticatedError("the Authorization header must be: Bearer <API token>"),
  bodyTooLarge: (maxBytes: number) =>
    new PayloadTooLargeError(
      `the request body is larger than ${maxBytes} bytes, the most the management API reads`,
    ),
  holderUnreachable: (id: string, url: string, why: string) =>
    new UnavailableError(
      `node ${id}, which holds the files this request needs, can't be reached at ${url} (${why}); nothing was changed`,
    ),
  holderFailed: (id: string, url: string, why: string) =>
    new BadGatewayError(
      `node ${id} (${url}), which holds the files this request needs, failed while serving it (${why}); it may or may not have taken effect: check before retrying`,
    ),
  rateLimited: (limit: number, windowSeconds: number, retryAfter: number) =>
    new LimitExceededError(
      `rate limit exceeded: ${limit} requests per ${windowSeconds} s for this API token; retry in ${retryAfter} s`,
    ),
  invalidInput: (where: string, at: string, problem: string) =>
    new InvalidError(`invalid ${where}: ${at}${problem}`),
  invalidJson: (reason: string) => new InvalidError(`invalid JSON body: ${reason}`),
  notMultipart: (field: string) =>
    new InvalidError(`send the file as multipart/form-data, in a field named ${field}`),
  multipartTruncated: () => new InvalidError("the multipart body ends before its closing boundary"),
  noMultipartBoundary: () => new InvalidError("no multipart boundary near the start of the body"),
  multipartHeadersTooLarge: () => new InvalidError("a multipart part has oversized headers"),
  multipartFieldMissing: (field: string) =>
    new InvalidError(`the multipart body has no field named ${field}`),
  emailRequired: () => new InvalidError("email is required"),
  usernameRequired: () => new InvalidError("username is required"),
  noMfa: () => new InvalidError("require_mfa is not supported: Shoal has no multi-factor sign-in"),
};
