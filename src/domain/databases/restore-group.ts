import { isoTime } from "../../lib/time.js";
import type { GroupRow } from "../../store/schema.js";
import { requireFilesHere } from "../cluster/placement-tx.js";
import { requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { keptRow } from "../core/kept.js";
import type { Ref } from "../core/ref.js";
import { type Group, toGroup } from "../groups/views.js";
import { requireQuota } from "../plans/quota-tx.js";
import { restoreErrors } from "./errors.js";
import type { DatabaseCtx } from "./ports.js";
import { restoreDatabase } from "./restore.js";
import type { Database } from "./views.js";

/** A deleted group that can still be restored, with how many databases went with it. */
export interface DeletedGroup {
  id: string;
  name: string;
  deletedAt: string;
  restorableUntil: string;
  locations: string[];
  cascadeDatabases: number;
}

/** An organization's deleted groups that can still be restored, newest first. */
export async function listDeletedGroups(ctx: DatabaseCtx, slug: Ref): Promise<DeletedGroup[]> {
  return ctx.deps.store.read(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "read");
    const out: DeletedGroup[] = [];
    // A token limited to one group sees no other: its own, deleted, took the token along.
    if (ctx.actor.groupId) return out;
    for (const g of await r.deletedGroups.list(org.id)) {
      out.push({
        id: g.id,
        name: g.name,
        deletedAt: g.deleted_at,
        restorableUntil: g.purge_after,
        locations: JSON.parse(g.locations) as string[],
        cascadeDatabases: (await r.deletedDatabases.ofDeletedGroup(g.id)).length,
      });
    }
    return out;
  });
}

/**
 * Brings a deleted group back (name, locations, settings), then each database deleted with it.
 * The group comes back even when some of its databases can't (their names taken meanwhile, say):
 * those are named in `failures`, to be restored one by one, as on Turso.
 */
export async function restoreGroup(
  ctx: DatabaseCtx,
  slug: Ref,
  id: string,
): Promise<{ group: Group; databases: Database[]; failures: Record<string, string> }> {
  const { deps } = ctx;
  const { group, dbIds } = await deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "org:restore");
    await r.organizations.lockAll([org.id]);
    const kept = await r.deletedGroups.lock(id);
    if (!kept || kept.org_id !== org.id || kept.purge_after <= isoTime(deps.clock()))
      throw restoreErrors.noDeletedGroup(id);
    if (org.restore_enabled !== 1) throw restoreErrors.recoveryOff(org.slug);
    if (await r.groups.findByName(org.id, kept.name)) throw restoreErrors.groupNameTaken(kept.name);
    const kept0 = JSON.parse(kept.record) as GroupRow;
    const locations = JSON.parse(kept.locations) as string[];
    await requireQuota(r, org, "groups");
    await requireQuota(r, org, "locations", locations.length);
    // Its databases' files are kept where its primary was: the whole restore runs there.
    await requireFilesHere(r, deps, [kept0.primary_location]);
    // Tokens of the group as it was stay refused, as a restored database's do.
    const row = { ...kept0, org_id: org.id, token_generation: kept0.token_generation + 1 };
    await r.groups.insert(row);
    const now = isoTime(deps.clock());
    for (const [position, location] of locations.entries())
      await r.groups.insertLocation({ group_id: row.id, location, position, added_at: now });
    await r.deletedGroups.remove(id);
    await audit(r, ctx, org.id, "group-restore", `group ${row.name} restored`, { group: row.name });
    // Schema databases first: a child restored before its schema database would lose it.
    const dbIds = (await r.deletedDatabases.ofDeletedGroup(id))
      .map((d) => ({ id: d.id, schema: keptRow(d.record).is_schema === 1 }))
      .sort((a, b) => Number(b.schema) - Number(a.schema))
      .map((d) => d.id);
    return { group: toGroup(row, locations), dbIds };
  });
  deps.directory.invalidate();
  const databases: Database[] = [];
  const failures: Record<string, string> = {};
  for (const dbId of dbIds) {
    try {
      databases.push(await restoreDatabase(ctx, slug, dbId));
    } catch (e) {
      failures[dbId] = e instanceof Error ? e.message : String(e);
    }
  }
  return { group, databases, failures };
}
