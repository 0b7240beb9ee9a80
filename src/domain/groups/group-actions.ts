import { UniqueViolationError } from "../../errors.js";
import type { GroupRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import { requireGroup } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { checkGroupName } from "../core/names.js";
import { groupErrors } from "./errors.js";
import type { GroupCtx } from "./ports.js";
import { type Group, statusOf, toGroup } from "./views.js";

export interface GroupConfiguration {
  deleteProtection: boolean;
}

async function view(r: Repos, ctx: GroupCtx, row: GroupRow): Promise<Group> {
  return toGroup(row, (await r.groups.locationsOf([row.id])).get(row.id) ?? [], statusOf(ctx.deps));
}

export async function getGroupConfiguration(
  ctx: GroupCtx,
  slug: string,
  name: string,
): Promise<GroupConfiguration> {
  return ctx.deps.store.read(async (r) => {
    const { group } = await requireGroup(r, ctx.actor, slug, name, "read");
    return { deleteProtection: group.delete_protection === 1 };
  });
}

/** Turns a group's delete protection on or off; an absent field changes nothing. */
export async function updateGroupConfiguration(
  ctx: GroupCtx,
  slug: string,
  name: string,
  patch: { deleteProtection?: boolean },
): Promise<GroupConfiguration> {
  return ctx.deps.store.write(async (r) => {
    const { org, group } = await requireGroup(r, ctx.actor, slug, name, "group:configure");
    const current = group.delete_protection === 1;
    const wanted = patch.deleteProtection ?? current;
    if (wanted !== current) {
      await r.groups.update(group.id, { delete_protection: wanted ? 1 : 0 });
      await audit(
        r,
        ctx,
        org.id,
        wanted ? "group-protect" : "group-unprotect",
        `delete protection of group ${name} turned ${wanted ? "on" : "off"}`,
        { group: name },
      );
    }
    return { deleteProtection: wanted };
  });
}

/**
 * Renames a group. Nothing else changes: database hostnames are `<db>-<org>` and never name the
 * group, and group tokens (SQL and API) are bound to the group's id, so they keep working.
 */
export async function renameGroup(
  ctx: GroupCtx,
  slug: string,
  name: string,
  newName: string,
): Promise<Group> {
  checkGroupName(newName);
  const group = await ctx.deps.store.write(async (r) => {
    const { org, group } = await requireGroup(r, ctx.actor, slug, name, "group:configure");
    if (newName === name) return view(r, ctx, group);
    try {
      await r.groups.rename(group.id, newName);
    } catch (e) {
      if (e instanceof UniqueViolationError) throw groupErrors.exists();
      throw e;
    }
    await audit(r, ctx, org.id, "group-rename", `group ${name} renamed to ${newName}`, {
      group: newName,
      from: name,
    });
    return view(r, ctx, { ...group, name: newName });
  });
  // The data plane's records carry the group's name.
  ctx.deps.directory.invalidate();
  return group;
}

/**
 * Clears a group's archived flag. Shoal never archives a group by itself (an idle database costs
 * nothing to keep); the flag is only ever set from outside the API, and this undoes it.
 */
export async function unarchiveGroup(ctx: GroupCtx, slug: string, name: string): Promise<Group> {
  const group = await ctx.deps.store.write(async (r) => {
    const { org, group } = await requireGroup(r, ctx.actor, slug, name, "group:configure");
    const was = group.archived === 1;
    if (was) await r.groups.update(group.id, { archived: 0 });
    await audit(
      r,
      ctx,
      org.id,
      "group-unarchive",
      was ? `group ${name} unarchived` : `group ${name} was not archived`,
      { group: name, archived: was },
    );
    return view(r, ctx, { ...group, archived: 0 });
  });
  ctx.deps.directory.invalidate();
  return group;
}

/**
 * Turso's "upgrade every database of the group to the newest libSQL server". Every Shoal database
 * always runs the engine bundled with the running Shoal, so there is nothing to upgrade: the call
 * is recorded and answers at once, without downtime.
 */
export async function updateGroupVersion(ctx: GroupCtx, slug: string, name: string): Promise<void> {
  await ctx.deps.store.write(async (r) => {
    const { org } = await requireGroup(r, ctx.actor, slug, name, "group:configure");
    await audit(
      r,
      ctx,
      org.id,
      "group-update",
      `group ${name}: already on the bundled libSQL of Shoal ${ctx.deps.version}`,
      { group: name, version: ctx.deps.version },
    );
  });
}
