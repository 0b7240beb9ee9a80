import { parseRfc3339 } from "../../lib/rfc3339.js";
import { isoTime } from "../../lib/time.js";
import { audit } from "../core/audit-tx.js";
import type { Ctx } from "../core/context.js";
import type { Placement } from "../core/ports.js";
import { requireInstanceAdmin } from "../core/roles.js";
import type { BackupOperations, BackupPorts, RestoreOutcome, RestorePointsView } from "./backup-port.js";
import { clusterErrors } from "./errors.js";

export type BackupCtx = Ctx<BackupPorts & { placement: Placement }>;

/** One database's shipping, with the names an operator knows it by. */
export interface DatabaseBackupView {
  id: string;
  organization: string | null;
  name: string | null;
  location: string | null;
  generation: number | null;
  frame: number | null;
  delayMs: number;
  failures: number;
  lastError: string | null;
  diverged: string | null;
}

export interface BackupStatusView {
  enabled: boolean;
  node: string;
  bucket: string | null;
  intervalMs: number | null;
  delayMs: number;
  databases: DatabaseBackupView[];
}

function requireBackups(ctx: BackupCtx): BackupOperations {
  requireInstanceAdmin(ctx.actor, "manage backups");
  if (!ctx.deps.backups) throw clusterErrors.backupsOff();
  return ctx.deps.backups;
}

/** `GET /v1/admin/backups`: this node's shipping, per database. */
export async function backupStatus(ctx: BackupCtx): Promise<BackupStatusView> {
  requireInstanceAdmin(ctx.actor, "manage backups");
  const node = ctx.deps.placement.nodeId;
  const b = ctx.deps.backups;
  if (!b) return { enabled: false, node, bucket: null, intervalMs: null, delayMs: 0, databases: [] };
  const status = await b.status();
  const databases = await ctx.deps.store.read(async (r) => {
    const out: DatabaseBackupView[] = [];
    for (const d of status.databases) {
      const row = await r.databases.findById(d.id);
      out.push({
        ...d,
        organization: row?.org_slug ?? null,
        name: row?.name ?? null,
        location: row?.primary_location ?? null,
      });
    }
    return out;
  });
  return {
    enabled: true,
    node,
    bucket: b.bucketUrl,
    intervalMs: b.intervalMs,
    delayMs: status.delayMs,
    databases,
  };
}

/** A database by organization slug and name, for an instance administrator. */
async function findDatabase(ctx: BackupCtx, org: string, name: string) {
  return ctx.deps.store.read(async (r) => {
    const o = await r.organizations.findBySlug(org);
    if (!o) throw clusterErrors.backupOrgNotFound(org);
    const db = await r.databases.findByName(o.id, name);
    if (!db) throw clusterErrors.backupDbNotFound(org, name);
    return db;
  });
}

/** `GET /v1/admin/backups/{org}/{db}`: what the bucket can restore the database to. */
export async function backupPoints(
  ctx: BackupCtx,
  org: string,
  name: string,
): Promise<{ id: string; points: RestorePointsView }> {
  const backups = requireBackups(ctx);
  const db = await findDatabase(ctx, org, name);
  const points = await backups.points(db.id);
  if (!points) throw clusterErrors.noBackup(name);
  return { id: db.id, points };
}

/** A restore's `timestamp`, as a moment in ms; undefined: the latest shipped point. */
export function restoreMoment(timestamp: string | undefined): number | undefined {
  if (timestamp === undefined) return undefined;
  const t = parseRfc3339(timestamp);
  if (!t.ok) throw clusterErrors.badRestoreTime(t.error);
  return t.date.getTime();
}

function refused(outcome: RestoreOutcome, name: string, at: number | undefined): never {
  const when = at === undefined ? "" : isoTime(new Date(at));
  if (outcome.kind === "future") throw clusterErrors.restoreInFuture(when, isoTime(new Date(outcome.now)));
  if (outcome.kind === "before-history")
    throw clusterErrors.restoreBeforeHistory(when, name, isoTime(new Date(outcome.earliest)));
  throw clusterErrors.noBackup(name);
}

/**
 * `POST /v1/admin/backups/{org}/{db}/restore`: puts the database back as it was at `timestamp`
 * (or as the bucket last has it), in place: same id, name, tokens and URLs. Only the node holding
 * its primary location can; anything fails before the swap and the database is as it was.
 */
export async function restoreFromBackup(
  ctx: BackupCtx,
  org: string,
  name: string,
  timestamp: string | undefined,
): Promise<{ id: string; location: string; outcome: Extract<RestoreOutcome, { kind: "restored" }> }> {
  const backups = requireBackups(ctx);
  const at = restoreMoment(timestamp);
  const db = await findDatabase(ctx, org, name);
  const location = db.primary_location;
  if (!ctx.deps.placement.holds(location)) {
    const holder = await ctx.deps.store.read((r) => r.nodes.holderOf(location));
    if (!holder) throw clusterErrors.locationUnheld(location);
    throw clusterErrors.filesElsewhere([location], holder, ctx.deps.placement.nodeId);
  }
  const outcome = await backups.restore(db.id, location, at);
  if (outcome.kind !== "restored") refused(outcome, name, at);
  await ctx.deps.store.write((r) =>
    audit(r, ctx, db.org_id, "db-restore", `database ${name} restored from the backup bucket`, {
      database: name,
      timestamp: timestamp ?? null,
      generation: outcome.generation,
      frame: outcome.frame,
    }),
  );
  return { id: db.id, location, outcome };
}

/**
 * `POST /v1/admin/backups/restore-missing`: restores every primary this node should hold but
 * whose file is gone (a fresh node in place of a lost one); one failing doesn't stop the others.
 */
export async function restoreMissing(ctx: BackupCtx, timestamp: string | undefined) {
  const backups = requireBackups(ctx);
  const at = restoreMoment(timestamp);
  if (at !== undefined && at > ctx.deps.clock().getTime()) {
    throw clusterErrors.restoreInFuture(timestamp ?? "", isoTime(ctx.deps.clock()));
  }
  const results = await backups.restoreMissing(at);
  return ctx.deps.store.write(async (r) => {
    const out = [];
    for (const x of results) {
      const row = await r.databases.findById(x.id);
      out.push({ ...x, organization: row?.org_slug ?? null, name: row?.name ?? null });
      if (row && x.outcome?.kind === "restored") {
        const { generation, frame } = x.outcome;
        await audit(
          r,
          ctx,
          row.org_id,
          "db-restore",
          `database ${row.name} restored from the backup bucket`,
          {
            database: row.name,
            timestamp: timestamp ?? null,
            generation,
            frame,
          },
        );
      }
    }
    return out;
  });
}
