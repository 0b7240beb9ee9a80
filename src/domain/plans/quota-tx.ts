import type { OrganizationRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import { planErrors } from "./errors.js";

/** The things an organization holds that a plan caps. */
export type Holding = "databases" | "groups" | "locations";

const NOUN: Record<Holding, string> = { databases: "databases", groups: "groups", locations: "locations" };

/**
 * Refuses a create that would take the organization past its plan's quota of `what`, unless
 * overages are on (then usage past the quota is allowed, as on Turso, and shows in invoices).
 * Called inside the create's transaction, after locking the organization, so two concurrent
 * creates can't both take the last slot. `adding` is how many the create adds (0 when it adds
 * nothing new, such as a location another group already uses).
 */
/** A location counts against the quota only when none of the organization's groups has it yet. */
export async function requireLocationQuota(r: Repos, org: OrganizationRow, location: string): Promise<void> {
  if (org.overages === 1) return;
  await r.plans.lockOrganization(org.id);
  await requireQuota(r, org, "locations", (await r.plans.usesLocation(org.id, location)) ? 0 : 1);
}

export async function requireQuota(r: Repos, org: OrganizationRow, what: Holding, adding = 1): Promise<void> {
  if (adding <= 0 || org.overages === 1) return;
  const plan = await r.plans.find(org.plan);
  const cap = plan?.[what];
  if (cap === null || cap === undefined) return;
  await r.plans.lockOrganization(org.id);
  // Counting stops just past the cap: enough to decide, and constant time however many exist.
  const held = await r.plans.holdingUpTo(org.id, what, cap + 1);
  if (held + adding > cap) {
    throw planErrors.quotaUsedUp(org, cap, NOUN[what], held);
  }
}
