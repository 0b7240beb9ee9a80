import { readdirSync, readFileSync } from "node:fs";

/** Descriptors one open database connection holds: the file, its WAL and shared-memory file, and slack. */
export const DESCRIPTORS_PER_CONNECTION = 4;
/** Used when the process's limit can't be read (not Linux). */
const ASSUMED_LIMIT = 4096;

/** The process's soft limit on open files (`ulimit -n`), read from /proc on Linux. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.split(/\s{2,}/)[1];
    if (soft === "unlimited") return Number.MAX_SAFE_INTEGER;
    const n = Number(soft);
    return Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How many database connections may be open at once: half of the process's descriptors, the
 * other half left for client sockets, replication and the store.
 */
export function connectionBudget(limit = openFileLimit() ?? ASSUMED_LIMIT): number {
  return Math.max(8, Math.floor(limit / 2 / DESCRIPTORS_PER_CONNECTION));
}

/** Descriptors open now, or undefined where that can't be counted. */
export function openDescriptors(): number | undefined {
  try {
    return readdirSync("/proc/self/fd").length;
  } catch {
    return undefined;
  }
}

/**
 * Whether an open that failed may have failed for want of descriptors (SQLite reports that as
 * SQLITE_CANTOPEN like any other failure to open): fewer than 32 are left, or they can't be counted.
 */
export function descriptorsNearlyUsed(): boolean {
  const limit = openFileLimit();
  const open = openDescriptors();
  if (limit === undefined || open === undefined) return true;
  return limit - open < 32;
}
