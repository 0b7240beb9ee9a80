import { requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { coreErrors } from "../core/errors.js";
import { checkTokenAllows, requireRoleAllows } from "../core/roles.js";
import { settleBlocking } from "../plans/blocking-tx.js";
import type { AccountCtx } from "./ports.js";
import { type Organization, toOrganization } from "./views.js";

/**
 * Core operation 3: `PATCH /v1/organizations/{org}`; owners, admins and members may change
 * overages. Turning them on lifts a quota block in the same transaction; turning them off judges
 * the month's usage again at once (so the usage counted so far is flushed first). Either way the
 * data plane sees the new flags from the next statement.
 */
export async function updateOrganization(
  ctx: AccountCtx,
  slug: string,
  patch: { overages?: boolean; restoreEnabled?: boolean },
): Promise<Organization> {
  if (patch.overages === false) await ctx.deps.meter.flush();
  const { org, blockChanged } = await ctx.deps.store.write(async (r) => {
    const { org, role } = await requireOrgAccess(r, ctx.actor, slug, "org:update");
    let blockChanged = false;
    if (patch.restoreEnabled !== undefined && (org.restore_enabled === 1) !== patch.restoreEnabled) {
      // Whether deleted databases can be brought back is an owner's or an admin's call.
      requireRoleAllows(role, "org:restore");
      checkTokenAllows(ctx.actor, "org:restore");
      await r.organizations.update(org.id, { restore_enabled: patch.restoreEnabled ? 1 : 0 });
      await audit(
        r,
        ctx,
        org.id,
        "org-set-restore",
        `recovery of deleted databases turned ${patch.restoreEnabled ? "on" : "off"}`,
        {
          restore_enabled: patch.restoreEnabled,
        },
      );
    }
    if (patch.overages !== undefined && (org.overages === 1) !== patch.overages) {
      await r.organizations.update(org.id, { overages: patch.overages ? 1 : 0 });
      await audit(r, ctx, org.id, "org-set-overages", `overages turned ${patch.overages ? "on" : "off"}`, {
        overages: patch.overages,
      });
      blockChanged = await settleBlocking(r, ctx.deps, org.id, ctx);
    }
    const updated = await r.organizations.findById(org.id);
    if (!updated) throw coreErrors.organizationNotFound();
    return { org: updated, blockChanged };
  });
  if (blockChanged) ctx.deps.directory.invalidate();
  return toOrganization(org);
}
