import { UnavailableError } from "../errors.js";

/**
 * The store's failures a caller can act on. Connection losses and silences become one of these
 * (store.ts), so the API answers 503 with what happened instead of a 500, and a caller can tell
 * "nothing changed" from "can't be known".
 */

/** Why the connection failed, in the driver's words (never the server's address or password). */
function reason(e: unknown): string {
  const err = e as { code?: unknown; message?: unknown };
  if (typeof err?.code === "string" && /^E[A-Z]+$/.test(err.code)) return err.code;
  return typeof err?.message === "string" && err.message !== "" ? err.message : String(e);
}

/** The store couldn't be reached, or stopped answering, before anything was committed. */
export function storeUnreachable(e: unknown): UnavailableError {
  return withCause(
    new UnavailableError(
      `the control-plane store can't be reached (${reason(e)}): nothing was changed; retry shortly`,
      "STORE_UNAVAILABLE",
    ),
    e,
  );
}

/** The connection was lost while a transaction was committing: it may or may not have landed. */
export function storeOutcomeUnknown(e: unknown): UnavailableError {
  return withCause(
    new UnavailableError(
      `the control-plane store stopped answering while this change was committing (${reason(e)}): it may or may not have been made; look before retrying`,
      "STORE_OUTCOME_UNKNOWN",
    ),
    e,
  );
}

/** The driver's error stays attached, for the log line of a caller that logs it. */
function withCause(err: UnavailableError, cause: unknown): UnavailableError {
  Object.defineProperty(err, "cause", { value: cause, enumerable: false, configurable: true });
  return err;
}
