import { UniqueViolationError } from "../../errors.js";
import { sha256Hex } from "../../lib/secrets.js";
import type { Clock } from "../../lib/time.js";
import { isoTime } from "../../lib/time.js";
import type { StoreAccess } from "../core/ports.js";
import { accountErrors } from "./errors.js";

/** How long a key is remembered: a retry later than this runs as a new request. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** A reservation older than this whose request never finished (the process died) may be taken over. */
const IN_FLIGHT_TTL_MS = 5 * 60_000;

const KEY = /^[\x21-\x7e]{1,255}$/;

export type IdempotentStart = { replay: false } | { replay: true; status: number; body: string };

/** Identifies a request, so a key reused for a different one is caught. */
export function requestFingerprint(method: string, path: string, body: string): string {
  return sha256Hex(`${method} ${path}\n${body}`);
}

/**
 * Starts a create sent with an `Idempotency-Key` header. The first request with a key reserves
 * it and runs; a retry with the same key and the same request gets the first answer back instead
 * of running again (a second create would be a 409); the same key on a different request is a 422
 * (as the IETF Idempotency-Key draft says), and a retry while the first is still running a 409.
 * Keys are per user and kept for 24 hours.
 */
export async function beginIdempotent(
  deps: { store: StoreAccess; clock: Clock },
  userId: string,
  key: string,
  fingerprint: string,
): Promise<IdempotentStart> {
  if (!KEY.test(key)) {
    throw accountErrors.invalidIdempotencyKey();
  }
  const now = deps.clock();
  return deps.store.write(async (r) => {
    await r.idempotency.deleteOlderThan(userId, isoTime(new Date(now.getTime() - IDEMPOTENCY_TTL_MS)));
    const found = await r.idempotency.find(userId, key);
    if (found) {
      if (found.fingerprint !== fingerprint) {
        throw accountErrors.idempotencyKeyReused();
      }
      if (found.status !== 0) return { replay: true, status: found.status, body: found.response };
      if (now.getTime() - Date.parse(found.created_at) < IN_FLIGHT_TTL_MS)
        throw accountErrors.idempotencyInProgress();
      await r.idempotency.delete(userId, key);
    }
    try {
      await r.idempotency.insert({
        user_id: userId,
        key,
        fingerprint,
        status: 0,
        response: "",
        created_at: isoTime(now),
      });
    } catch (e) {
      if (e instanceof UniqueViolationError) throw accountErrors.idempotencyInProgress();
      throw e;
    }
    return { replay: false };
  });
}

/** Records the answer of a request that succeeded, for retries to get. */
export async function completeIdempotent(
  deps: { store: StoreAccess },
  userId: string,
  key: string,
  status: number,
  body: string,
): Promise<void> {
  await deps.store.write((r) => r.idempotency.complete(userId, key, status, body));
}

/**
 * Releases the key of a request that failed. A failed create changed nothing, so its retry (after
 * fixing the request, or once a conflict is gone) should run for real.
 */
export async function abandonIdempotent(
  deps: { store: StoreAccess },
  userId: string,
  key: string,
): Promise<void> {
  await deps.store.write((r) => r.idempotency.delete(userId, key));
}
