import type { Deps } from "./context.js";

/** Files younger than this are never swept: they may belong to a create that hasn't committed yet. */
const ORPHAN_GRACE_MS = 10 * 60_000;

export interface ReconcileReport {
  recreated: number;
  missingPrimaries: number;
  removedOrphans: number;
}

export interface ReconcileOptions {
  /**
   * Whether this node holds a location. Only held locations are touched: with several nodes on
   * one store, the instances of another node's locations are that node's to check, and a folder
   * of a location this node doesn't hold is left as it is. Unset: every location (one node).
   */
  holds?: (location: string) => boolean;
  now?: number;
}

/**
 * Brings the files on disk back in line with the store after a crash: a replica the store lists
 * but that is missing (a crash while a location was being built) is built again from its primary;
 * a file no database owns (a crash between committing a delete and removing its files) is removed.
 * Replicas that exist are registered without being opened. A missing primary is reported, never
 * papered over with an empty file.
 */
export async function reconcileInstanceFiles(
  deps: Deps,
  opts: ReconcileOptions = {},
): Promise<ReconcileReport> {
  const holds = opts.holds ?? (() => true);
  const now = opts.now ?? Date.now();
  const expected = (await deps.store.read((r) => r.databases.allInstances())).filter((i) =>
    holds(i.location),
  );
  const report: ReconcileReport = { recreated: 0, missingPrimaries: 0, removedOrphans: 0 };
  const wanted = new Set<string>();
  const missingReplicas: Array<{ dbId: string; location: string; primary: string }> = [];
  for (const i of expected) {
    wanted.add(`${i.location}/${i.db_id}`);
    if (i.location !== i.primary_location) {
      if (deps.files.exists(i.location, i.db_id)) deps.replicas.adopt(i.db_id, i.location);
      else missingReplicas.push({ dbId: i.db_id, location: i.location, primary: i.primary_location });
      continue;
    }
    if (!deps.files.exists(i.location, i.db_id)) {
      report.missingPrimaries++;
      deps.log.error({ dbId: i.db_id, location: i.location }, "primary instance file is missing");
    }
  }
  for (const location of deps.files.locations()) {
    if (!holds(location)) continue;
    for (const id of deps.files.idsIn(location)) {
      if (wanted.has(`${location}/${id}`)) continue;
      const mtime = deps.files.modifiedAt(location, id);
      if (mtime !== undefined && now - mtime < ORPHAN_GRACE_MS) continue;
      deps.files.remove(location, id);
      report.removedOrphans++;
    }
  }
  // Missing replicas (a crash while a location was being built) are built again from their primaries.
  // Only from a primary on this node: a replica syncs from this node's own address.
  for (const m of missingReplicas) {
    if (!deps.files.exists(m.primary, m.dbId)) continue;
    try {
      await deps.replicas.ensure(m.dbId, m.location);
      report.recreated++;
    } catch (e) {
      deps.log.error({ err: e, dbId: m.dbId, location: m.location }, "could not rebuild a missing replica");
    }
  }
  if (report.recreated + report.missingPrimaries + report.removedOrphans > 0) {
    deps.log.warn(report, "reconciled instance files with the control plane");
  }
  return report;
}
