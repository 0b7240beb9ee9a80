import type { ReplicaPort, StoreAccess } from "../domain/core/ports.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { KeptFiles } from "../engine/kept-files.js";
import type { Logger } from "../lib/logger.js";

/** What reconciling this node's files with the store reaches. */
export interface ReconcilePorts {
  store: StoreAccess;
  files: Pick<InstanceFiles, "exists" | "locations" | "idsIn" | "modifiedAt" | "remove">;
  replicas: Pick<ReplicaPort, "adopt" | "catchUp" | "ensure">;
  /** Deleted databases' files kept restorable (see `settleKept`). */
  kept: Pick<KeptFiles, "has" | "keep" | "restore">;
  log: Logger;
}

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
  /**
   * When this process started (ms). A file without a database row is removed only when nothing
   * of it changed since: a file touched later may be a create of this very process in flight.
   * Unset: now.
   */
  startedAt?: number;
}

/** What the first step found for the second to finish once the node serves. */
export interface PendingReconcile {
  report: ReconcileReport;
  /** Replicas that exist on disk, handed to their workers; they pull once the node serves. */
  adopted: Array<{ dbId: string; location: string }>;
  /**
   * Replicas the store lists but whose files are gone (a crash while a location was being built,
   * a node started on an empty data folder); `remote`: their primary is on another node.
   */
  missing: Array<{ dbId: string; location: string; primary: string; remote: boolean }>;
}

/**
 * The first step, run before the node serves requests, so nothing of this process is in flight:
 * every replica that exists is handed to its location's worker (a replica its worker doesn't know
 * answers nothing), a missing primary is reported (never papered over with an empty file), and
 * the files no database owns are removed. Such a file is what a create leaves when it never
 * committed its row, or a delete that committed without removing its files: files of a held
 * location are made only by this node, under its data folder, and this node's earlier process is
 * gone (joining refuses a live twin), so no create can still be working on one.
 */
export async function reconcileBeforeServing(
  deps: ReconcilePorts,
  opts: ReconcileOptions = {},
): Promise<PendingReconcile> {
  const holds = opts.holds ?? (() => true);
  const startedAt = opts.startedAt ?? Date.now();
  const expected = (await deps.store.read((r) => r.databases.allInstances())).filter((i) =>
    holds(i.location),
  );
  const pending: PendingReconcile = {
    report: { recreated: 0, missingPrimaries: 0, removedOrphans: 0 },
    adopted: [],
    missing: [],
  };
  const wanted = new Set<string>();
  const kept = new Set(
    (await deps.store.read((r) => r.deletedDatabases.allPlaces()))
      .filter((d) => holds(d.primary_location))
      .map((d) => `${d.primary_location}/${d.id}`),
  );
  for (const i of expected) {
    wanted.add(`${i.location}/${i.db_id}`);
    const here = deps.files.exists(i.location, i.db_id);
    if (i.location !== i.primary_location) {
      if (here) {
        await deps.replicas.adopt(i.db_id, i.location);
        pending.adopted.push({ dbId: i.db_id, location: i.location });
      } else {
        const remote = !holds(i.primary_location);
        pending.missing.push({ dbId: i.db_id, location: i.location, primary: i.primary_location, remote });
      }
    } else if (!here && settleKept(deps, "restored", i.location, i.db_id)) {
      // Restored, but the process ended before the files were moved back.
    } else if (!here) {
      pending.report.missingPrimaries++;
      deps.log.error({ dbId: i.db_id, location: i.location }, "primary instance file is missing");
    }
  }
  for (const location of deps.files.locations()) {
    if (!holds(location)) continue;
    for (const id of deps.files.idsIn(location)) {
      if (wanted.has(`${location}/${id}`)) continue;
      if ((deps.files.modifiedAt(location, id) ?? 0) >= startedAt) continue;
      // Deleted and kept, but the process ended before the files were moved aside.
      if (kept.has(`${location}/${id}`) && settleKept(deps, "deleted", location, id)) continue;
      deps.files.remove(location, id);
      pending.report.removedOrphans++;
    }
  }
  return pending;
}

/**
 * The second step, once the node serves (a replica syncs from this node's own address): replicas
 * that were adopted pull what their primaries committed while the process was down, and missing
 * replicas are built again: from a primary on this node when it has its file, and from one on
 * another node (first from the backup bucket when backups are on, so a primary out of reach
 * doesn't keep the replica from serving).
 */
export async function reconcileWhileServing(
  deps: ReconcilePorts,
  pending: PendingReconcile,
): Promise<ReconcileReport> {
  const { report } = pending;
  for (const a of pending.adopted) deps.replicas.catchUp(a.dbId, a.location);
  for (const m of pending.missing) {
    if (!m.remote && !deps.files.exists(m.primary, m.dbId)) continue;
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

/** Both steps at once, for a node that already serves and has no create in flight. */
export async function reconcileInstanceFiles(
  deps: ReconcilePorts,
  opts: ReconcileOptions = {},
): Promise<ReconcileReport> {
  return reconcileWhileServing(deps, await reconcileBeforeServing(deps, opts));
}

/**
 * Finishes a deletion or a restore whose row was committed but whose files weren't moved before
 * the process ended: a kept database's files still among the instances go aside, a restored
 * database's kept files come back. Answers whether it moved them.
 */
function settleKept(
  deps: ReconcilePorts,
  what: "deleted" | "restored",
  location: string,
  id: string,
): boolean {
  try {
    if (what === "deleted") deps.kept.keep(location, id);
    else if (deps.kept.has(id)) deps.kept.restore(location, id);
    else return false;
  } catch (e) {
    deps.log.error({ err: e, dbId: id, location }, `could not finish moving the files of a ${what} database`);
    return false;
  }
  deps.log.warn({ dbId: id, location }, `finished moving the files of a ${what} database`);
  return true;
}
