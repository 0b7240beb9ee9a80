import { requireDatabase } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import type { DatabaseCtx } from "./ports.js";

/**
 * `POST .../databases/{db}/update`: Turso's "upgrade to the newest libSQL server". A Shoal database
 * always runs the engine bundled with the running Shoal, so the request is recorded and answered
 * at once, with no downtime.
 */
export async function updateDatabaseVersion(ctx: DatabaseCtx, slug: string, name: string): Promise<void> {
  await ctx.deps.store.write(async (r) => {
    const { org } = await requireDatabase(r, ctx.actor, slug, name, "db:configure");
    await audit(
      r,
      ctx,
      org.id,
      "db-update",
      `database ${name}: already on the bundled libSQL of Shoal ${ctx.deps.version}`,
      { database: name, version: ctx.deps.version },
    );
  });
}

/**
 * `POST .../databases/{db}/wakeup` (the CLI's `db unarchive`). A database is archived with its
 * group, so waking it unarchives the group. Recorded under Turso's code for it, misspelling
 * included, so audit filters written against Turso keep matching.
 */
export async function wakeDatabase(ctx: DatabaseCtx, slug: string, name: string): Promise<void> {
  await ctx.deps.store.write(async (r) => {
    const { org, db } = await requireDatabase(r, ctx.actor, slug, name, "db:configure");
    const was = db.group_archived === 1;
    if (was) await r.groups.update(db.group_id, { archived: 0 });
    await audit(
      r,
      ctx,
      org.id,
      "db-aunrchive",
      was ? `database ${name} woken up with its group ${db.group_name}` : `database ${name} was not archived`,
      { database: name, group: db.group_name, archived: was },
    );
  });
  ctx.deps.directory.invalidate();
}
