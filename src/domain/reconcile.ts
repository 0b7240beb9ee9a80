import type { Deps } from "./context.js";

/** Files younger than this are never swept: they may belong to a create that hasn't committed yet. */
const ORPHAN_GRACE_MS = 10 * 60_000;

export interface ReconcileReport {
  recreated: number;
  missingPrimaries: number;
  removedOrphans: number;
}

/**
 * Brings the files on disk back in line with the store after a crash: an instance the store lists
 * but whose file is missing (a crash while a location was being seeded) is copied again from its
 * primary; a file no database owns (a crash between committing a delete and removing its files) is
 * removed. A missing primary is reported, never papered over with an empty file.
 */
export async function reconcileInstanceFiles(deps: Deps, now = Date.now()): Promise<ReconcileReport> {
  const expected = await deps.store.read((r) => r.databases.allInstances());
  const report: ReconcileReport = { recreated: 0, missingPrimaries: 0, removedOrphans: 0 };
  const wanted = new Set<string>();
  for (const i of expected) {
    wanted.add(`${i.location}/${i.db_id}`);
    if (deps.files.exists(i.location, i.db_id)) continue;
    if (i.location === i.primary_location) {
      report.missingPrimaries++;
      deps.log.error({ dbId: i.db_id, location: i.location }, "primary instance file is missing");
    } else if (deps.files.exists(i.primary_location, i.db_id)) {
      deps.files.copy(i.primary_location, i.location, i.db_id);
      report.recreated++;
    }
  }
  for (const location of deps.files.locations()) {
    for (const id of deps.files.idsIn(location)) {
      if (wanted.has(`${location}/${id}`)) continue;
      const mtime = deps.files.modifiedAt(location, id);
      if (mtime !== undefined && now - mtime < ORPHAN_GRACE_MS) continue;
      deps.files.remove(location, id);
      report.removedOrphans++;
    }
  }
  if (report.recreated + report.missingPrimaries + report.removedOrphans > 0) {
    deps.log.warn(report, "reconciled instance files with the control plane");
  }
  return report;
}
