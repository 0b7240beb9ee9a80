import { NotFoundError } from "../errors.js";
import { audit } from "./audit.js";
import type { Ctx } from "./context.js";
import { requireOrgAccess } from "./roles.js";
import { type Organization, toOrganization } from "./views.js";

/** Core operation 3: `PATCH /v1/organizations/{org}`; owners, admins and members may change overages. */
export async function updateOrganization(
  ctx: Ctx,
  slug: string,
  patch: { overages?: boolean },
): Promise<Organization> {
  return ctx.deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "org:update");
    if (patch.overages !== undefined && (org.overages === 1) !== patch.overages) {
      await r.organizations.update(org.id, { overages: patch.overages ? 1 : 0 });
      await audit(r, ctx, org.id, "org-set-overages", `overages turned ${patch.overages ? "on" : "off"}`, {
        overages: patch.overages,
      });
    }
    const updated = await r.organizations.findById(org.id);
    if (!updated) throw new NotFoundError("organization not found");
    return toOrganization(updated);
  });
}
