import { UniqueViolationError } from "../../errors.js";
import { isoTime } from "../../lib/time.js";
import type { PlanRow, PlansTable } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import { requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { coreErrors } from "../core/errors.js";
import { requireInstanceAdmin } from "../core/roles.js";
import { settleBlocking } from "./blocking-tx.js";
import { planErrors } from "./errors.js";
import type { PlanCtx } from "./ports.js";
import { COLUMN, type Plan, type Quotas, type Subscription, toPlan } from "./views.js";

const PLAN_NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const PRICE = /^\d{1,12}(?:\.\d{1,2})?$/;

function requireAdmin(ctx: PlanCtx, what: string): void {
  requireInstanceAdmin(ctx.actor, what);
}

/** The columns a plan input sets; absent quotas are left out (unchanged), null ones are unlimited. */
function columnsOf(input: { price?: string; quotas?: Partial<Quotas> }): Partial<PlansTable> {
  const out: Partial<Record<keyof PlansTable, unknown>> = {};
  if (input.price !== undefined) {
    if (!PRICE.test(input.price)) {
      throw planErrors.invalidPrice(input.price);
    }
    out.price = input.price;
  }
  for (const [key, value] of Object.entries(input.quotas ?? {}) as Array<[keyof Quotas, number | null]>) {
    if (value === undefined) continue;
    if (value !== null && (!Number.isSafeInteger(value) || value < 0)) {
      throw planErrors.invalidQuota(COLUMN[key]);
    }
    out[COLUMN[key]] = value;
  }
  return out as Partial<PlansTable>;
}

async function adminAudit(
  r: Repos,
  ctx: PlanCtx,
  code: string,
  message: string,
  data: Record<string, unknown>,
) {
  const own = await r.organizations.findBySlug(ctx.actor.username);
  if (own) await audit(r, ctx, own.id, code, message, data);
}

/** `GET /v1/admin/plans`: every plan with how many organizations are on it. */
export async function listAllPlans(ctx: PlanCtx): Promise<Array<Plan & { organizations: number }>> {
  requireAdmin(ctx, "manage plans");
  return ctx.deps.store.read(async (r) => {
    const out = [];
    for (const p of await r.plans.list()) {
      out.push({ ...toPlan(p), organizations: await r.plans.countOrganizations(p.name) });
    }
    return out;
  });
}

/** `POST /v1/admin/plans`: a new plan; quotas left out are unlimited. */
export async function createPlan(
  ctx: PlanCtx,
  input: { name: string; price?: string; quotas?: Partial<Quotas> },
): Promise<Plan> {
  requireAdmin(ctx, "manage plans");
  if (!PLAN_NAME.test(input.name)) {
    throw planErrors.invalidPlanName(input.name);
  }
  const row = {
    name: input.name,
    price: "0",
    rows_read: null,
    rows_written: null,
    storage_bytes: null,
    databases: null,
    groups: null,
    locations: null,
    bytes_synced: null,
    ...columnsOf(input),
    created_at: isoTime(ctx.deps.clock()),
  };
  return ctx.deps.store.write(async (r) => {
    try {
      await r.plans.insert(row);
    } catch (e) {
      if (e instanceof UniqueViolationError) throw planErrors.planExists(input.name);
      throw e;
    }
    const plan = toPlan(row);
    await adminAudit(r, ctx, "plan-create", `plan ${plan.name} created`, { plan: plan.name, ...plan.quotas });
    return plan;
  });
}

/**
 * `PATCH /v1/admin/plans/{plan}`: changes the price or quotas. Every organization on the plan is
 * judged again in the same transaction, so a raised quota lifts a block at once (and a lowered
 * one blocks at once). Creates already refused stay refused; nothing is removed when a plan shrinks.
 */
export async function updatePlan(
  ctx: PlanCtx,
  name: string,
  input: { price?: string; quotas?: Partial<Quotas> },
): Promise<Plan> {
  requireAdmin(ctx, "manage plans");
  const patch = columnsOf(input);
  await ctx.deps.meter.flush();
  const { plan, changed } = await ctx.deps.store.write(async (r) => {
    await r.plans.lockPlan(name);
    if (!(await r.plans.find(name))) throw planErrors.planNotFound(name);
    await r.plans.update(name, patch);
    const plan = toPlan((await r.plans.find(name)) as PlanRow);
    await adminAudit(r, ctx, "plan-update", `plan ${name} updated`, { plan: name, ...plan.quotas });
    let changed = false;
    for (const orgId of await r.plans.organizationsOn(name)) {
      if (await settleBlocking(r, ctx.deps, orgId, ctx)) changed = true;
    }
    return { plan, changed };
  });
  if (changed) ctx.deps.directory.invalidate();
  return plan;
}

/** `DELETE /v1/admin/plans/{plan}`: refused while organizations use it, and for the default plan. */
export async function deletePlan(ctx: PlanCtx, name: string): Promise<void> {
  requireAdmin(ctx, "manage plans");
  await ctx.deps.store.write(async (r) => {
    await r.plans.lockPlan(name);
    if (!(await r.plans.find(name))) throw planErrors.planNotFound(name);
    if (name === DEFAULT_PLAN) {
      throw planErrors.defaultPlanKept(name);
    }
    const users = await r.plans.countOrganizations(name);
    if (users > 0) {
      throw planErrors.planInUse(name, users);
    }
    await r.plans.delete(name);
    await adminAudit(r, ctx, "plan-delete", `plan ${name} deleted`, { plan: name });
  });
}

/** `GET …/plans` (and `/v1/plans`): the plans of this instance, for any member. */
export async function listPlans(ctx: PlanCtx, slug: string): Promise<Plan[]> {
  return ctx.deps.store.read(async (r) => {
    await requireOrgAccess(r, ctx.actor, slug, "read");
    return (await r.plans.list()).map(toPlan);
  });
}

/** `GET …/subscription`: the organization's plan and overages. */
export async function getSubscription(ctx: PlanCtx, slug: string): Promise<Subscription> {
  const { org } = await ctx.deps.store.read((r) => requireOrgAccess(r, ctx.actor, slug, "read"));
  return { plan: org.plan, overages: org.overages === 1, timeline: "monthly" };
}

/**
 * Moves an organization to another plan: instance administrators only (`POST …/subscription`,
 * the turso CLI's `plan select`, and `POST /v1/admin/organizations/{org}/plan`). The
 * organization is judged against the new plan in the same transaction: a larger plan lifts a
 * block at once.
 */
export async function setOrganizationPlan(
  ctx: PlanCtx,
  slug: string,
  planName: string,
): Promise<Subscription> {
  requireAdmin(ctx, "change an organization's plan; ask them for a larger plan");
  await ctx.deps.meter.flush();
  const { sub, changed } = await ctx.deps.store.write(async (r) => {
    const org = await r.organizations.findBySlug(slug);
    if (!org) throw coreErrors.organizationNotFound();
    await r.plans.lockPlan(planName);
    if (!(await r.plans.find(planName))) throw planErrors.unknownPlan(planName);
    let changed = false;
    if (org.plan !== planName) {
      await r.plans.lockOrganization(org.id);
      await r.plans.assign(org.id, planName);
      await audit(r, ctx, org.id, "org-plan-update", `plan changed from ${org.plan} to ${planName}`, {
        plan: planName,
        previous: org.plan,
      });
      changed = await settleBlocking(r, ctx.deps, org.id, ctx);
    }
    const sub: Subscription = { plan: planName, overages: org.overages === 1, timeline: "monthly" };
    return { sub, changed };
  });
  if (changed) ctx.deps.directory.invalidate();
  return sub;
}

/** Plan of a new organization: the one the migration creates, with no quotas. */
export const DEFAULT_PLAN = "self-hosted";
