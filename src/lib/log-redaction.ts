/**
 * Secrets kept out of log lines by field name, for pino's `formatters` (lib/logger.ts): API and
 * database tokens, the administrator's and the metrics scraper's tokens, `Authorization`, and
 * customers' encryption keys (ADR 0016), at any of the first few levels of what is logged.
 *
 * This replaces pino's path-based `redact`: its wildcard paths (`*.token`) cost about 10 µs per
 * line, more than the rest of writing the line, on every data-plane request a shard logs. A walk
 * over the few fields of a log line costs well under a microsecond and allocates only where it
 * finds a secret.
 */

const REDACTED = "[redacted]";

/** Field names, lower-cased, whose values never reach a log line. */
const SECRET_FIELDS = new Set([
  "authorization",
  "token",
  "jwt",
  "admintoken",
  "metricstoken",
  "encryption_key",
  "x-turso-encryption-key",
  "remoteencryptionkey",
]);

/** How deep a logged object is looked into: a request's headers sit three levels down. */
const MAX_DEPTH = 4;

const isSecret = (key: string) => SECRET_FIELDS.has(key.toLowerCase());

/**
 * `value` with every secret field's value replaced by "[redacted]", down to `MAX_DEPTH` levels of
 * plain objects, arrays and errors. The original is never changed: what holds a secret is copied,
 * and `value` itself is returned when there is none (the common case).
 */
export function redactSecrets<T>(value: T, depth = 0): T {
  if (depth >= MAX_DEPTH || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return redactArray(value, depth) as T;
  if (value instanceof Error) return redactError(value, depth) as T;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  let copy: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const v = record[key];
    const clean = isSecret(key) && v !== undefined && v !== null ? REDACTED : redactSecrets(v, depth + 1);
    if (clean !== v) {
      copy ??= { ...record };
      copy[key] = clean;
    }
  }
  return (copy ?? value) as T;
}

function redactArray(items: unknown[], depth: number): unknown[] {
  let copy: unknown[] | undefined;
  for (let i = 0; i < items.length; i++) {
    const clean = redactSecrets(items[i], depth + 1);
    if (clean !== items[i]) {
      copy ??= [...items];
      copy[i] = clean;
    }
  }
  return copy ?? items;
}

/**
 * An error with a secret among its own fields (a driver's error carrying its request's options):
 * an error of the same class, message and stack, those fields replaced, so pino still logs it as one.
 */
function redactError(e: Error, depth: number): Error {
  const fields = e as unknown as Record<string, unknown>;
  const clean = redactSecrets({ ...fields }, depth);
  if (Object.keys(clean).every((k) => clean[k] === fields[k])) return e;
  const copy = Object.create(Object.getPrototypeOf(e)) as Error;
  Object.defineProperties(copy, {
    message: { value: e.message, enumerable: false, writable: true, configurable: true },
    stack: { value: e.stack, enumerable: false, writable: true, configurable: true },
  });
  if (e.cause !== undefined) copy.cause = redactSecrets(e.cause, depth + 1);
  return Object.assign(copy, clean);
}
