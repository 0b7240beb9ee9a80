import { ReplicaWorkStopped } from "./released.js";

/**
 * What a failed pull calls for:
 * - `rebuild`: 410, the generation the replica was in is gone (pruned, or lost to a checkpoint
 *   Shoal didn't make). libSQL's client can't recover by itself; the replica is built again. (A
 *   keyless follower, for an encrypted database, recovers by itself with a fresh copy.)
 * - `recheck`: refused or cut off. The primary's node may be back at another address (a restart
 *   takes a new port); its record is read again rather than remembered a while longer.
 * - `quiet`: the relay already said so once for all of that primary's replicas (pull-relay.ts).
 * - `none`: the replica's location holds the primary now, or replication shut down; nothing failed.
 * - `warn`: anything else, worth a line in the log.
 */
export function syncFailureAction(
  e: unknown,
  encrypted: boolean,
): "rebuild" | "recheck" | "quiet" | "none" | "warn" {
  if (e instanceof ReplicaWorkStopped) return "none";
  const message = e instanceof Error ? e.message : "";
  if (!encrypted && /\b410\b/.test(message)) return "rebuild";
  if (message.includes("PRIMARY_NOT_ANSWERING")) return "quiet";
  if (/PRIMARY_UNREACHABLE|Connect|Connection ?(refused|reset)/i.test(message)) return "recheck";
  return "warn";
}
