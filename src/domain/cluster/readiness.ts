import type { Logger } from "../../lib/logger.js";
import { clusterErrors } from "./errors.js";

/** Something the service needs to serve, checked by the readiness route: throws when it can't be used. */
export interface ReadinessProbe {
  /** What it checks, as the answer names it: `control-plane store`, `data folder`. */
  readonly name: string;
  check(): Promise<void>;
}

/** A probe slower than this counts as failed: a readiness check must answer while the caller waits. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Throws an `UnavailableError` naming each resource the service can't use right now (the store,
 * the data folder); resolves when all of them answer. Nothing is cached: the answer turns back to
 * ready as soon as they do. Reasons carry error codes, not messages, since the route is public and
 * messages name paths and addresses; the full error goes to the log when a probe starts failing.
 */
export async function checkReadiness(deps: {
  readiness: readonly ReadinessProbe[];
  log: Logger;
}): Promise<void> {
  const failures: string[] = [];
  await Promise.all(
    deps.readiness.map(async (probe) => {
      try {
        await withTimeout(probe.check(), PROBE_TIMEOUT_MS);
        failing.delete(probe);
      } catch (e) {
        if (!failing.has(probe)) deps.log.warn({ err: e, probe: probe.name }, "readiness probe failed");
        failing.add(probe);
        failures.push(`${probe.name} can't be used (${reasonOf(e)})`);
      }
    }),
  );
  if (failures.length > 0) throw clusterErrors.notReady(failures.sort().join("; "));
}

/** Probes failing at the last check, so a long outage logs once, not at every probe. */
const failing = new WeakSet<ReadinessProbe>();

function reasonOf(e: unknown): string {
  // The store's typed errors keep the driver's error, whose code says more (ECONNREFUSED).
  const err = ((e as { cause?: unknown }).cause ?? e) as {
    code?: unknown;
    errors?: Array<{ code?: unknown }>;
  };
  const code = err.code ?? err.errors?.[0]?.code;
  if (typeof code === "string" && code !== "") return code;
  return e instanceof ProbeTimeout ? e.message : "unavailable";
}

class ProbeTimeout extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
