import type { DataAccess } from "../../domain/data-access/open.js";
import type { ExecResult, Prepared } from "../../engine/connection.js";
import type { HostedDatabase } from "../../engine/hosted-database.js";
import type { StreamServices } from "./stream-services.js";

/**
 * The fence a statement passes before it runs: nothing at all on a group isolated here (cut off
 * from a standby and the store, see hosting/standbys.ts), reads included; and every write, and
 * the commit that makes writes durable, needs the primary's lease. Undefined: it may run now;
 * else it runs once the promise resolves (the lease renewed), or not at all.
 */
export function fenceFor(
  services: Pick<StreamServices, "fence">,
  db: DataAccess["database"],
  p: Prepared,
  holdsLock: boolean,
): Promise<void> | undefined {
  const fence = services.fence;
  if (!fence) return undefined;
  fence.refuseIfIsolated(db);
  const writes = !p.readonly || (p.info.kind === "commit" && holdsLock);
  return writes && !fence.mayWrite(db) ? fence.acquire(db) : undefined;
}

/**
 * A commit's answer: once the group's standbys have it, when it has any (hosting/standbys.ts);
 * rejected with WRITE_UNCONFIRMED when that can't be known.
 */
export function confirmedCommit(
  services: Pick<StreamServices, "fence">,
  hosted: HostedDatabase,
  db: DataAccess["database"],
  result: ExecResult,
): ExecResult | Promise<ExecResult> {
  const confirmed = services.fence?.confirm(db, () => hosted.frameLog.position().index);
  return confirmed ? confirmed.then(() => result) : result;
}
